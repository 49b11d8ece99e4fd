import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What the proxy does to one request. `before` answers (or drops the connection) without
 * forwarding: the server never sees the request. `after` forwards it, lets the server finish,
 * then hides the server's answer behind a reset or another status: the caller cannot know the
 * request ran. `hold` forwards it and never answers (the caller's process is killed meanwhile).
 */
export interface FaultPlan {
  latencyMs?: number;
  before?: "reset" | { status: number; retryAfter?: number };
  after?: "reset" | "hold" | { status: number };
}

export interface ProxiedAttempt {
  method: string;
  path: string;
  idempotencyKey: string | null;
  plan: FaultPlan;
  /** When the request reached the proxy (ms since the epoch). */
  at: number;
  /** The server's status, when the request was forwarded and answered. */
  upstreamStatus?: number;
}

export interface FaultProxy {
  url: string;
  attempts: ProxiedAttempt[];
  /** Resolves with the first request whose plan was `hold`, once the server has answered it. */
  held: Promise<ProxiedAttempt>;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length"]);

/** A small HTTP proxy in front of the app that injects failures by plan, for the SDK's tests. */
export async function startFaultProxy(
  target: string,
  planFor: (attempt: { method: string; path: string; n: number }) => FaultPlan,
): Promise<FaultProxy> {
  const attempts: ProxiedAttempt[] = [];
  let onHeld: (a: ProxiedAttempt) => void = () => {};
  const held = new Promise<ProxiedAttempt>((resolve) => {
    onHeld = resolve;
  });
  const open = new Set<ServerResponse>();

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = req.url ?? "/";
    const plan = planFor({ method: req.method ?? "GET", path, n: attempts.length });
    const attempt: ProxiedAttempt = {
      method: req.method ?? "GET",
      path,
      idempotencyKey: (req.headers["idempotency-key"] as string | undefined) ?? null,
      plan,
      at: Date.now(),
    };
    attempts.push(attempt);
    if (plan.latencyMs) await new Promise((r) => setTimeout(r, plan.latencyMs));
    if (plan.before === "reset") return void req.socket.destroy();
    if (plan.before) {
      const headers: Record<string, string> = { "content-type": "application/problem+json" };
      if (plan.before.retryAfter !== undefined) headers["retry-after"] = String(plan.before.retryAfter);
      res.writeHead(plan.before.status, headers);
      return void res.end(
        JSON.stringify({
          type: "about:blank",
          title: "Injected",
          status: plan.before.status,
          detail: "fault proxy",
        }),
      );
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (!HOP_BY_HOP.has(name) && typeof value === "string") headers.set(name, value);
    const upstream = await fetch(new URL(path, target), {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    attempt.upstreamStatus = upstream.status;
    if (plan.after === "hold") return onHeld(attempt);
    if (plan.after === "reset") return void req.socket.destroy();
    if (plan.after) {
      res.writeHead(plan.after.status, { "content-type": "text/plain" });
      return void res.end("injected after the server answered");
    }
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name) && name !== "content-encoding") out[name] = value;
    });
    res.writeHead(upstream.status, out);
    res.end(body);
  }

  const server = createServer((req, res) => {
    open.add(res);
    res.once("close", () => open.delete(res));
    handle(req, res).catch((error: unknown) => {
      res.writeHead(599).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    held,
    async stop() {
      for (const res of open) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
