import type { AnyTRPCRouter, TRPCError } from "@trpc/server";
import { createOpenApiFetchHandler } from "trpc-to-openapi";
import { createContext } from "../context";
import { env } from "../env";
import { parseIdempotencyKey } from "../idempotency";
import { appRouter } from "../root";
import type { Meta } from "../trpc";
import { readCapped } from "./capped-body";
import { problemFromError, problemOf, problemResponse } from "./problems";

export const REST_PREFIX = "/api/v1";

interface Route {
  method: string;
  pattern: RegExp;
}

const idempotentRoutesCache = new WeakMap<AnyTRPCRouter, Route[]>();

/** The REST routes of idempotent procedures, from their OpenAPI metadata. */
function idempotentRoutes(router: AnyTRPCRouter): Route[] {
  let routes = idempotentRoutesCache.get(router);
  if (!routes) {
    const procedures = router._def.procedures as Record<string, { _def: { meta?: Meta } }>;
    routes = Object.values(procedures).flatMap(({ _def: { meta } }) => {
      if (!meta?.idempotent || !meta.openapi) return [];
      const source = `${REST_PREFIX}${meta.openapi.path}`
        .replace(/\/+$/, "")
        .split("/")
        .map((s) => (/^\{.+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/");
      // Case-insensitive and trailing-slash tolerant, as trpc-to-openapi routes.
      return [{ method: meta.openapi.method, pattern: new RegExp(`^${source}/?$`, "i") }];
    });
    idempotentRoutesCache.set(router, routes);
  }
  return routes;
}

function keyProblem(req: Request): Response | null {
  const raw = req.headers.get("idempotency-key");
  const parsed = parseIdempotencyKey(raw);
  if (parsed.ok) return null;
  const missing = raw === null || raw === "";
  return problemResponse(
    problemOf(missing ? "idempotency-key-missing" : "idempotency-key-invalid", parsed.reason),
  );
}

/**
 * The REST surface: tRPC procedures with `meta.openapi`, routed by trpc-to-openapi, over the same
 * context, middlewares and idempotency layer as /api/trpc. This edge adds what the generator
 * cannot: the key check before anything else, the body cap, Bearer-only authentication, the
 * procedure's own response headers, and errors as RFC 9457 problems.
 */
export async function handleRestRequest(req: Request, router: AnyTRPCRouter = appRouter): Promise<Response> {
  const { pathname } = new URL(req.url);
  const idempotent = idempotentRoutes(router).some(
    (r) => r.method === req.method && r.pattern.test(pathname),
  );
  if (idempotent) {
    const problem = keyProblem(req);
    if (problem) return problem;
  }
  // Bearer API keys only: a browser's session cookie must not authorise a cross-site REST call.
  const headers = new Headers(req.headers);
  headers.delete("cookie");
  let body: Uint8Array<ArrayBuffer> | undefined;
  if (req.method !== "GET" && req.method !== "HEAD") {
    const cap = env.IDEMPOTENCY_MAX_BODY_BYTES;
    const capped = Number(req.headers.get("content-length") ?? 0) > cap ? null : await readCapped(req, cap);
    if (capped === null)
      return problemResponse(problemOf("payload-too-large", `Request bodies are limited to ${cap} bytes.`));
    body = capped;
  }
  const request = new Request(req.url, { method: req.method, headers, body });

  const resHeaders = new Headers();
  let failure: TRPCError | undefined;
  const response = await createOpenApiFetchHandler({
    endpoint: REST_PREFIX,
    req: request,
    router,
    createContext: () => createContext({ req: request, resHeaders }),
    onError({ error, path }) {
      failure = error;
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`REST ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
  const out = new Headers(response.headers);
  for (const [name, value] of resHeaders) out.set(name, value);
  if (response.status >= 400 && failure) {
    out.delete("content-length");
    return problemResponse(problemFromError(failure, response.status), out);
  }
  return new Response(response.body, { status: response.status, headers: out });
}
