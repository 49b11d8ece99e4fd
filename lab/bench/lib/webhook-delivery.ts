import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type pg from "pg";
import { closedLoop, type LoadResult } from "./load";

/** The row's name in bench:http's table; the fresh row beside it is `fresh ×c`. */
export const deliveredRow = (clients: number) => `fresh, webhook delivered ×${clients}`;

/** What `measured` of bench:http reports that this row reads. */
type WithCpu = LoadResult & { cpu?: { server: number; postgres?: number } };

/**
 * The cost of delivering a merchant webhook per payment (issue 41): fresh payments of an account
 * with one endpoint registered, at a receiver on loopback that answers 204, the load ending when
 * every payment's message is delivered. The server runs the fan-out and the delivery (its
 * background jobs), so its CPU and PostgreSQL's, less the same row without the endpoint in the
 * same pass, is the delivery's cost per payment. Its per-second figure includes the wait for the
 * last deliveries; its p50 is the payments' own.
 */
export function webhookDeliveryRow<M extends WithCpu>(deps: {
  admin: pg.Pool;
  accountId: string;
  orders: (n: number) => Promise<string[]>;
  pay: (key: string, orderId: string) => Promise<{ status: number }>;
  measure: (run: () => Promise<LoadResult>) => Promise<M>;
}) {
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(204).end();
    });
  });
  receiver.listen(0, "127.0.0.1");
  receiver.unref();
  const listening = once(receiver, "listening");

  return async (clients: number, payments: number): Promise<M> => {
    await listening;
    const { port } = receiver.address() as AddressInfo;
    const ids = await deps.orders(payments);
    // Written as the account page would (an endpoint and its secret): the server's guard allows
    // loopback outside production.
    const { rows } = await deps.admin.query<{ id: string }>(
      `WITH e AS (INSERT INTO webhook_endpoints (id, account_id, url, event_types)
                  VALUES (gen_random_uuid(), $1, $2, '{payment.succeeded}') RETURNING id)
       INSERT INTO webhook_secrets (id, endpoint_id, secret) SELECT gen_random_uuid(), e.id, $3 FROM e
       RETURNING endpoint_id::text AS id`,
      [deps.accountId, `http://127.0.0.1:${port}/hooks`, `whsec_${randomBytes(32).toString("base64")}`],
    );
    const endpointId = rows[0]?.id as string;
    received = 0;
    try {
      return await deps.measure(async () => {
        const load = await closedLoop(
          clients,
          ids.length,
          async (k) => (await deps.pay(randomUUID(), ids[k] as string)).status === 200,
        );
        await delivered(deps.admin, endpointId, ids.length);
        if (received < ids.length)
          throw new Error(`the receiver got ${received} of ${ids.length} deliveries`);
        return load;
      });
    } finally {
      // Later rows pay for the same account: none of them delivers.
      await deps.admin.query("UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1", [endpointId]);
    }
  };
}

/** Waits (up to 60 s) until `n` messages of the endpoint are delivered. */
async function delivered(admin: pg.Pool, endpointId: string, n: number): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const { rows } = await admin.query(
      "SELECT count(*)::int AS n FROM webhook_messages WHERE endpoint_id = $1 AND status = 'succeeded'",
      [endpointId],
    );
    if (rows[0].n >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fewer than ${n} webhook messages delivered within 60 s`);
}

/**
 * The report's lines: per pass, the delivery's CPU per payment (server and PostgreSQL, the row
 * with the endpoint less the fresh row) and its ratio to the payment's own.
 */
export function deliveryCostLines(results: Record<string, WithCpu[]>, clients: readonly number[]): string[] {
  const f = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(2));
  const lines = ["\nwebhook delivery per payment (row with an endpoint less fresh, same pass)"];
  for (const c of clients) {
    const fresh = results[`fresh ×${c}`] ?? [];
    const withHook = results[deliveredRow(c)] ?? [];
    const passes = withHook.map((h, p) => {
      const base = fresh[p]?.cpu;
      const server = (h.cpu?.server ?? Number.NaN) - (base?.server ?? Number.NaN);
      const postgres = (h.cpu?.postgres ?? Number.NaN) - (base?.postgres ?? Number.NaN);
      const payment = (base?.server ?? Number.NaN) + (base?.postgres ?? Number.NaN);
      return `server +${f(server)} ms, postgres +${f(postgres)} ms, ${f((server + postgres) / payment)} × the payment's CPU`;
    });
    lines.push(`×${c}: ${passes.join(" / ") || "n/a"}`);
  }
  return lines;
}
