import { createHash } from "node:crypto";
import { ApiReference } from "@scalar/nextjs-api-reference";
import { OPENAPI_PATH } from "@/server/http/openapi";
import { viewerCsp } from "@/server/http/security-headers";

// Scalar's interactive reader of the OpenAPI document (decision 0230: the reference itself is
// /docs/api, rendered without script), its script served by this app (../reference.js) rather than from a CDN, and
// without the parts that call Scalar's services (fonts, telemetry, AI agent, MCP, toolbar).
const renderReference = ApiReference({
  url: OPENAPI_PATH,
  cdn: "/docs/api/reference.js",
  pageTitle: "Idempotent Checkout API",
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
  // Scalar's greys for secondary text are 4.4:1 and 3.3:1 on its light backgrounds: below WCAG AA.
  customCss:
    ":root, .light-mode { --scalar-color-2: #595959 !important; --scalar-color-3: #616161 !important; }",
});

/**
 * The page's inline scripts (Scalar's configuration) are allowed by their hashes, so the page
 * keeps a CSP as strict as the others: its own scripts, nothing inline it did not write.
 */
export async function GET(): Promise<Response> {
  const page = renderReference();
  // Scalar's page declares no language; the others say English, and so must this one.
  const html = (await page.text()).replace(/<html(?![^>]*\blang=)/, '<html lang="en"');
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash("sha256")
        .update(m[1] ?? "")
        .digest("base64")}'`,
  );
  const headers = new Headers(page.headers);
  headers.set("Content-Security-Policy", viewerCsp(hashes));
  return new Response(html, { status: page.status, headers });
}
