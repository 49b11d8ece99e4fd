import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AnyTRPCRouter } from "@trpc/server";
import { installPeerAddress } from "../auth/peer-address";
import { errorField, logger } from "../log";
import { routeApiRequest } from "./api-routes";
import { API_SECURITY_HEADERS } from "./security-headers";

/**
 * The API's HTTP edge on a plain Node server (the API tier, decision 0210): the routes of the
 * Next app's /api, answered by the same handlers, with the headers next.config.ts gives them.
 * Body caps, key checks, cross-site refusals, request logs and the 503 of a lost database are
 * the handlers' own, so they hold here as under Next.
 */
export function createApiServer(router?: AnyTRPCRouter): Server {
  // The socket's peer appended to X-Forwarded-For, as in Next (instrumentation.ts).
  installPeerAddress();
  return createServer(async (req, res) => {
    let request: Request;
    try {
      request = toRequest(req);
    } catch {
      // A Host that makes no URL (Next answers it 400 too): nothing to route.
      res.writeHead(400, { connection: "close" }).end();
      return;
    }
    try {
      await send(res, await routeApiRequest(request, router));
    } catch (error) {
      logger.error({ err: errorField(error) }, "request failed outside the handler");
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  for (const { key, value } of API_SECURITY_HEADERS) res.setHeader(key, value);
  for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  // A refused body may still be arriving: closing the connection stops reading it.
  if (response.status === 413) res.shouldKeepAlive = false;
  // Whole answers (the handlers' are small JSON), sent with their length rather than chunked.
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  if (body) res.setHeader("content-length", body.byteLength);
  res.writeHead(response.status).end(body);
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
