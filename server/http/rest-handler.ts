import type { AnyTRPCRouter, TRPCError } from "@trpc/server";
import { createOpenApiFetchHandler } from "trpc-to-openapi";
import { createContext } from "../context";
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  databaseUnavailable,
} from "../db/unavailable";
import { env } from "../env";
import { checkIdempotentCall } from "../keys";
import { errorField } from "../log";
import { appRouter } from "../root";
import type { Meta } from "../trpc";
import { readCapped } from "./capped-body";
import { problemFromError, problemOf, problemResponse } from "./problems";
import { type ObservedRequest, observeRequest } from "./request-log";
import type { EdgeDeps } from "./trpc-handler";

export const REST_PREFIX = "/api/v1";
/** Sent with every 401 (RFC 9110 section 11.6.1): the API takes Bearer tokens. */
export const WWW_AUTHENTICATE = 'Bearer realm="api"';

interface Route {
  method: string;
  pattern: RegExp;
  /** The procedure's path, e.g. payments.create. */
  procedure: string;
  idempotent: boolean;
}

const routesCache = new WeakMap<AnyTRPCRouter, Route[]>();

/** The REST routes, from the procedures' OpenAPI metadata. */
function restRoutes(router: AnyTRPCRouter): Route[] {
  let routes = routesCache.get(router);
  if (!routes) {
    const procedures = router._def.procedures as Record<string, { _def: { meta?: Meta } }>;
    routes = Object.entries(procedures).flatMap(([procedure, { _def }]) => {
      const meta = _def.meta;
      if (!meta?.openapi) return [];
      const source = `${REST_PREFIX}${meta.openapi.path}`
        .replace(/\/+$/, "")
        .split("/")
        .map((s) => (/^\{.+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/");
      // Case-insensitive and trailing-slash tolerant, as trpc-to-openapi routes.
      const pattern = new RegExp(`^${source}/?$`, "i");
      return [{ method: meta.openapi.method, pattern, procedure, idempotent: meta.idempotent === true }];
    });
    routesCache.set(router, routes);
  }
  return routes;
}

function keyProblem(req: Request): Response | null {
  const raw = req.headers.get("idempotency-key");
  const parsed = checkIdempotentCall(raw, { batched: false });
  if (parsed.ok) return null;
  const missing = raw === null || raw === "";
  return problemResponse(
    problemOf(missing ? "idempotency-key-missing" : "idempotency-key-invalid", parsed.reason),
  );
}

/**
 * The REST surface: tRPC procedures with `meta.openapi`, routed by trpc-to-openapi, over the same
 * context, middlewares and idempotency layer as /api/trpc, and observed the same way (request
 * id, log line, latency labelled `rest:<procedure>`).
 */
export function handleRestRequest(
  req: Request,
  router: AnyTRPCRouter = appRouter,
  deps: EdgeDeps = {},
): Promise<Response> {
  const { pathname } = new URL(req.url);
  const route = restRoutes(router).find((r) => r.method === req.method && r.pattern.test(pathname));
  return observeRequest(
    req,
    { procedure: route ? `rest:${route.procedure}` : "rest:(unknown)" },
    (observed) => answer(req, router, route, { ...observed, deps }),
    () => problemResponse(problemOf("internal-error", "Internal server error.")),
    deps,
  );
}

/**
 * What the generator cannot do: the key check before anything else, the body cap, Bearer-only
 * authentication, the procedure's own response headers, and errors as RFC 9457 problems.
 */
async function answer(
  req: Request,
  router: AnyTRPCRouter,
  route: Route | undefined,
  call: ObservedRequest & { deps: EdgeDeps },
): Promise<Response> {
  if (route?.idempotent) {
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
    // A POST without a body (a cancel, a rotation) is an empty JSON object, not a 415: the
    // generator asks for a JSON content type even where the operation takes no body.
    if (body.byteLength === 0 && !headers.has("content-type")) {
      headers.set("content-type", "application/json");
      body = new TextEncoder().encode("{}") as Uint8Array<ArrayBuffer>;
    }
  }
  const request = new Request(req.url, { method: req.method, headers, body });

  const resHeaders = new Headers();
  let failure: TRPCError | undefined;
  const response = await createOpenApiFetchHandler({
    endpoint: REST_PREFIX,
    req: request,
    router,
    createContext: () =>
      createContext({
        req: request,
        resHeaders,
        observation: call.observation,
        provider: call.deps.provider,
      }),
    onError({ error, path }) {
      failure = error;
      if (error.code === "INTERNAL_SERVER_ERROR" && databaseUnavailable(error.cause))
        call.log.warn(
          { requestId: call.requestId, procedure: path ?? null, err: errorField(error.cause) },
          "database unavailable: answered 503",
        );
      else if (error.code === "INTERNAL_SERVER_ERROR")
        call.log.error(
          { requestId: call.requestId, procedure: path ?? null, err: errorField(error.cause ?? error) },
          "procedure failed",
        );
    },
  });
  const out = new Headers(response.headers);
  for (const [name, value] of resHeaders) out.set(name, value);
  if (failure?.code === "INTERNAL_SERVER_ERROR" && databaseUnavailable(failure.cause)) {
    out.delete("content-length");
    out.set("Retry-After", String(DATABASE_RETRY_AFTER_SECONDS));
    return problemResponse(problemOf("database-unavailable", DATABASE_UNAVAILABLE_MESSAGE), out);
  }
  if (response.status >= 400 && failure) {
    out.delete("content-length");
    if (response.status === 401) out.set("WWW-Authenticate", WWW_AUTHENTICATE);
    return problemResponse(problemFromError(failure, response.status), out);
  }
  return new Response(response.body, { status: response.status, headers: out });
}
