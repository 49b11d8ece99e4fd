import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AnyTRPCRouter } from "@trpc/server";
import { installPeerAddress } from "../auth/peer-address";
import { db } from "../db";
import { errorField, logger } from "../log";
import { paymentProvider } from "../provider";
import { OPENAPI_PATH, openApiDocument } from "./openapi";
import { handleProviderWebhook, PROVIDER_WEBHOOK_PATH } from "./provider-webhook";
import { handleRestRequest, REST_PREFIX } from "./rest-handler";
import { handleTrpcRequest } from "./trpc-handler";

/**
 * The API's HTTP edge on a plain Node server: the same handler as the Next route, for tests
 * that need a real server process they can kill, and without a Next build.
 */
export function createApiServer(router?: AnyTRPCRouter): Server {
  // The socket's peer appended to X-Forwarded-For, as in Next (instrumentation.ts).
  installPeerAddress();
  return createServer(async (req, res) => {
    try {
      const response = await route(toRequest(req), router);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      logger.error({ err: errorField(error) }, "request failed outside the handler");
      res.writeHead(500).end();
    }
  });
}

/** The API routes of the Next app: the REST surface, its OpenAPI document, the provider's webhook, and tRPC. */
function route(req: Request, router?: AnyTRPCRouter): Promise<Response> | Response {
  const { pathname } = new URL(req.url);
  if (pathname.startsWith(`${REST_PREFIX}/`)) return handleRestRequest(req, router);
  if (pathname === OPENAPI_PATH) return Response.json(openApiDocument());
  if (pathname === PROVIDER_WEBHOOK_PATH)
    return handleProviderWebhook(req, { prisma: db, provider: paymentProvider });
  return handleTrpcRequest(req, router);
}

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body: hasBody ? (req as unknown as ReadableStream) : undefined,
    // @ts-expect-error Node's fetch needs duplex for a streamed request body.
    duplex: hasBody ? "half" : undefined,
  });
}
