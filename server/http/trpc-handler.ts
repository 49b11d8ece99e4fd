import type { AnyTRPCRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { MAX_BATCH_CALLS } from "../../shared/batch-limit";
import { createContext } from "../context";
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable } from "../db/unavailable";
import { env } from "../env";
import { checkIdempotentCall, type RequestObservation } from "../keys";
import { errorField, type Logger } from "../log";
import type { Metrics } from "../metrics";
import type { PaymentProvider } from "../provider";
import { appRouter } from "../root";
import type { Meta } from "../trpc";
import { readCapped } from "./capped-body";
import { crossSiteRefusal } from "./cross-site";
import { observeRequest } from "./request-log";

export const TRPC_ENDPOINT = "/api/trpc";

/** A tRPC-shaped error answered before tRPC runs, so clients parse it like any other. */
function errorResponse(
  status: number,
  code: string,
  jsonRpcCode: number,
  message: string,
  path?: string,
): Response {
  return Response.json(
    { error: { message, code: jsonRpcCode, data: { code, httpStatus: status, ...(path ? { path } : {}) } } },
    { status },
  );
}

function proceduresOf(req: Request): { paths: string[]; batched: boolean } {
  const url = new URL(req.url);
  // Trimmed of slashes as tRPC trims them, so `a,b/` names the same procedures it will run.
  const path = url.pathname
    .slice(url.pathname.indexOf(TRPC_ENDPOINT) + TRPC_ENDPOINT.length)
    .replace(/^\/+|\/+$/g, "");
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape names no procedure; tRPC answers it as not found.
  }
  return { paths: decoded.split(","), batched: url.searchParams.get("batch") === "1" };
}

type Procedures = Record<string, { _def: { meta?: Meta } } | undefined>;

function isIdempotent(router: AnyTRPCRouter, path: string): boolean {
  return (router._def.procedures as Procedures)[path]?._def.meta?.idempotent === true;
}

/** The metrics label: a procedure the router has, so a caller cannot invent label values. */
function procedureLabel(router: AnyTRPCRouter, paths: string[]): string {
  if (paths.length > 1) return "(batch)";
  const path = paths[0] ?? "";
  return (router._def.procedures as Procedures)[path] ? path : "(unknown)";
}

export interface EdgeDeps {
  log?: Logger;
  metrics?: Metrics;
  /** The payment provider; the configured one when omitted (tests pass their own). */
  provider?: PaymentProvider;
}

/** The HTTP edge of the API, each request observed (id, log line, latency) by observeRequest. */
export function handleTrpcRequest(
  req: Request,
  router: AnyTRPCRouter = appRouter,
  deps: EdgeDeps = {},
): Promise<Response> {
  const { paths, batched } = proceduresOf(req);
  return observeRequest(
    req,
    {
      procedure: procedureLabel(router, paths),
      logged: paths.length > 1 ? paths.map((p) => procedureLabel(router, [p])) : undefined,
    },
    (observed) => answer(req, router, { paths, batched, ...observed, deps }),
    () => errorResponse(500, "INTERNAL_SERVER_ERROR", -32603, "Internal server error."),
    deps,
  );
}

/**
 * For idempotent procedures the Idempotency-Key header is checked first; batches over the cap
 * are refused; bodies over the published cap are refused with 413 before anything reads them.
 */
async function answer(
  req: Request,
  router: AnyTRPCRouter,
  call: {
    paths: string[];
    batched: boolean;
    observation: RequestObservation;
    log: Logger;
    requestId: string;
    deps: EdgeDeps;
  },
): Promise<Response> {
  const { paths, batched, observation, log } = call;
  if (batched && paths.length > MAX_BATCH_CALLS) {
    return errorResponse(
      400,
      "BAD_REQUEST",
      -32600,
      `A batch may carry at most ${MAX_BATCH_CALLS} calls; this one has ${paths.length}.`,
    );
  }
  const idempotent = paths.some((p) => isIdempotent(router, p));
  if (idempotent) {
    // Before the body is read: the same check the procedure makes, answered early.
    const checked = checkIdempotentCall(req.headers.get("idempotency-key"), { batched });
    if (!checked.ok) return errorResponse(400, "BAD_REQUEST", -32600, checked.reason, paths[0]);
  }
  const refused = crossSiteRefusal(req);
  if (refused)
    return errorResponse(
      refused.status,
      refused.code,
      refused.status === 415 ? -32015 : -32003,
      refused.message,
    );
  let request = req;
  if (req.method === "POST") {
    const cap = env.IDEMPOTENCY_MAX_BODY_BYTES;
    const tooLarge = () =>
      errorResponse(
        413,
        "PAYLOAD_TOO_LARGE",
        -32013,
        `Request bodies are limited to ${cap} bytes.`,
        paths[0],
      );
    const declared = req.headers.get("content-length");
    if (Number(declared ?? 0) > cap) return tooLarge();
    // A declared length within the cap is the body's length (the HTTP parser reads no more), so
    // only a body without one (chunked) is counted as it is read, into a request of its own.
    if (declared === null || !/^\d+$/.test(declared)) {
      const body = await readCapped(req, cap);
      if (body === null) return tooLarge();
      request = new Request(req.url, { method: req.method, headers: req.headers, body });
    }
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: request,
    router,
    createContext: (opts) => createContext({ ...opts, observation, provider: call.deps.provider }),
    responseMeta: ({ errors }) =>
      errors.some((e) => e.code === "INTERNAL_SERVER_ERROR" && databaseUnavailable(e.cause))
        ? { status: 503, headers: new Headers({ "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) }) }
        : {},
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR" && databaseUnavailable(error.cause))
        log.warn(
          { requestId: call.requestId, procedure: path ?? null, err: errorField(error.cause) },
          "database unavailable: answered 503",
        );
      else if (error.code === "INTERNAL_SERVER_ERROR")
        log.error(
          { requestId: call.requestId, procedure: path ?? null, err: errorField(error.cause ?? error) },
          "procedure failed",
        );
    },
  });
}
