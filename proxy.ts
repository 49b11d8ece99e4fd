import { type NextRequest, NextResponse } from "next/server";
import { env } from "./server/env";
import { HSTS, pageCsp } from "./server/http/security-headers";

// Pages only (see the matcher): a fresh CSP nonce per request, which Next puts on its own
// scripts, and HSTS in production. The stage is read at run time (server/env: production under
// `next start` unless APP_ENV=development), so one build serves any stage.
export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.randomUUID()).toString("base64");
  const csp = pageCsp(nonce, process.env.NODE_ENV === "development");
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("Content-Security-Policy", csp);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", csp);
  if (env.isProduction) response.headers.set("Strict-Transport-Security", HSTS);
  return response;
}

export const config = {
  matcher: [
    {
      // /docs/api and /docs/api/explorer are route handlers with CSPs of their own (none, or hashes).
      source: "/((?!api/|docs/api|_next/static|_next/image|favicon.ico).*)",
      // Prefetches are not documents; they need no nonce of their own.
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
