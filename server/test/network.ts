import http from "node:http";
import type { AddressInfo } from "node:net";

/** A port nothing listens on: a connection to it is refused, so no request can leave. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A stretch of network that holds the first request sent through it, unanswered, until
 * `deliver()` passes it on to `target` (as a request that arrives late does); later requests
 * pass straight through.
 */
export async function holdingProxy(target: string) {
  const held: (() => Promise<void>)[] = [];
  const forward = async (req: http.IncomingMessage, body: Buffer) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([name]) => !["host", "connection", "content-length"].includes(name),
      ),
    ) as Record<string, string>;
    const res = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      body: body.length > 0 ? body.toString("utf8") : undefined,
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (held.length === 0 && req.method === "POST") {
      held.push(async () => {
        await forward(req, body);
      });
      return; // never answered: the client gives up on its own timeout
    }
    const answer = await forward(req, body);
    res.writeHead(answer.status, {
      "content-type": answer.headers.get("content-type") ?? "application/json",
    });
    res.end(answer.text);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async deliver() {
      for (const send of held.splice(0)) await send();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
