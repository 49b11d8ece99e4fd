import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  at: number;
  headers: Record<string, string>;
  body: string;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string } | "hang";

/** A merchant's receiver on loopback: records every request and answers as `answer` says. */
export async function startReceiver(
  answer: (n: number, req: ReceivedWebhook) => Answer = () => ({ status: 200 }),
) {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
      );
      const got = { at: Date.now(), headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(got);
      const a = answer(received.length, got);
      if (a === "hang") return;
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.body ?? "");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    async stop() {
      server.closeAllConnections();
      server.close();
    },
  };
}
