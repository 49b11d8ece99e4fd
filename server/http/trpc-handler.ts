import type { AnyTRPCRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createContext } from "../context";
import { env } from "../env";
import { parseIdempotencyKey } from "../idempotency";
import { appRouter } from "../root";
import type { Meta } from "../trpc";
import { crossSiteRefusal } from "./cross-site";

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

function isIdempotent(router: AnyTRPCRouter, path: string): boolean {
  const procedure = (router._def.procedures as Record<string, { _def: { meta?: Meta } } | undefined>)[path];
  return procedure?._def.meta?.idempotent === true;
}

/** Reads at most `cap` bytes; null when the body is larger. */
async function readCapped(req: Request, cap: number): Promise<Uint8Array<ArrayBuffer> | null> {
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > cap) return null;
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * The HTTP edge of the API. For idempotent procedures the Idempotency-Key header is checked
 * first; then bodies over the published cap are refused with 413 before anything reads them.
 */
export async function handleTrpcRequest(req: Request, router: AnyTRPCRouter = appRouter): Promise<Response> {
  const { paths, batched } = proceduresOf(req);
  const idempotent = paths.some((p) => isIdempotent(router, p));
  if (idempotent) {
    if (batched) {
      return errorResponse(
        400,
        "BAD_REQUEST",
        -32600,
        "Idempotent procedures cannot be batched: send them one per request.",
      );
    }
    const key = parseIdempotencyKey(req.headers.get("idempotency-key"));
    if (!key.ok) return errorResponse(400, "BAD_REQUEST", -32600, key.reason, paths[0]);
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
    if (Number(req.headers.get("content-length") ?? 0) > cap) return tooLarge();
    const body = await readCapped(req, cap);
    if (body === null) return tooLarge();
    request = new Request(req.url, { method: req.method, headers: req.headers, body });
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: request,
    router,
    createContext,
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`tRPC ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
}
