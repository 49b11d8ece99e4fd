import http from "node:http";
import { performance } from "node:perf_hooks";

export interface Reply {
  status: number;
  body: string;
}

/** A keep-alive HTTP client: node:http costs the load generator far less CPU than fetch. */
export function httpClient(baseUrl: string, sockets: number) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  function request(method: string, path: string, headers: Record<string, string>, body?: string) {
    return new Promise<Reply>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          agent,
          headers: body
            ? { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
            : headers,
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }
  return { request, close: () => agent.destroy() };
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** Answers whose status was not the one expected. */
  unexpected: number;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

/**
 * A closed loop: `clients` workers, each sending its next request as soon as the last answered,
 * until `total` requests were sent. `send(i)` returns whether the answer was the expected one.
 */
export async function closedLoop(
  clients: number,
  total: number,
  send: (i: number) => Promise<boolean>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let unexpected = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < total; i = next++) {
        const start = performance.now();
        const ok = await send(i);
        latencies.push(performance.now() - start);
        if (!ok) unexpected++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    requests: total,
    seconds,
    perSecond: total / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    unexpected,
  };
}
