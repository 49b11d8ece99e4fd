import http from "node:http";
import type { AddressInfo } from "node:net";
import type { FaultKind } from "./journal";

/** What the proxy does to one request on its way to the provider. */
export type Fault =
  | { kind: "none" }
  /** Answered 500 or 503 here: the provider never sees the request. */
  | { kind: "error_before"; status: 500 | 503 }
  /** Delivered and answered by the provider (so committed), then the app's connection is reset. */
  | { kind: "reset_after_commit" }
  /** Kept here past the app's timeout, then delivered; the provider's answer goes nowhere. */
  | { kind: "hold"; ms: number }
  | { kind: "latency"; ms: number };

export interface FaultProxy {
  url: string;
  /** Provider down: every request answered 503 here until set back. */
  setDown(down: boolean): void;
  /** Held requests not yet delivered. */
  held(): number;
  /** Resolves once every held request has been delivered and answered. */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A small HTTP proxy between the app and the provider that does the network's worst on purpose.
 * Hand-written (docs/decisions/0090): the faults are defined by when the provider sees the
 * request relative to the app, which general-purpose proxies do not let a test decide.
 */
export async function startFaultProxy(opts: {
  target: string;
  /** Asked once per request that is not refused by the "down" switch. */
  decide(method: string, path: string): Fault;
  /** Told of every fault, with the payment a charge request names (null for other requests). */
  onFault(kind: FaultKind, paymentId: string | null): void;
}): Promise<FaultProxy> {
  const target = new URL(opts.target);
  const agent = new http.Agent({ keepAlive: true, timeout: 4000 });
  let down = false;
  const pending = new Set<Promise<unknown>>();

  const forward = (req: http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const headers = { ...req.headers, host: target.host };
      const out = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on("error", reject);
        },
      );
      out.on("error", reject);
      out.end(body);
    });

  const refuse = (res: http.ServerResponse, status: number) => {
    const body = JSON.stringify({
      error: { type: "api_error", message: `injected ${status} (chaos proxy)` },
    });
    res.writeHead(status, {
      "content-type": "application/json",
      ...(status === 503 ? { "retry-after": "1" } : {}),
    });
    res.end(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      // A refund's metadata names its payment too; its faults are not the payment's charge's.
      const paymentId = req.url?.startsWith("/v1/payment_intents") ? namedPayment(body) : null;
      if (down) {
        opts.onFault("down", paymentId);
        return refuse(res, 503);
      }
      const fault = opts.decide(req.method ?? "GET", req.url ?? "/");
      if (fault.kind !== "none") opts.onFault(fault.kind, paymentId);
      const work = (async () => {
        if (fault.kind === "error_before") return refuse(res, fault.status);
        if (fault.kind === "hold" || fault.kind === "latency")
          await new Promise((r) => setTimeout(r, fault.ms));
        const answer = await forward(req, body);
        if (fault.kind === "reset_after_commit" || res.destroyed || req.socket.destroyed) {
          req.socket.destroy();
          return;
        }
        const headers = { ...answer.headers };
        delete headers["transfer-encoding"];
        delete headers.connection;
        delete headers["keep-alive"];
        res.writeHead(answer.status, { ...headers, "content-length": String(answer.body.length) });
        res.end(answer.body);
      })().catch(() => {
        if (!res.headersSent && !res.destroyed) refuse(res, 502);
      });
      if (fault.kind === "hold") {
        pending.add(work);
        void work.finally(() => pending.delete(work));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setDown(value) {
      down = value;
    },
    held: () => pending.size,
    async drained() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** The payment a charge request's metadata names, so a fault can be tied to what a shopper saw. */
/** The payment a charge request names in its form-encoded body (`metadata[payment_id]=…`). */
function namedPayment(body: Buffer): string | null {
  if (body.length === 0) return null;
  return new URLSearchParams(body.toString("utf8")).get("metadata[payment_id]");
}
