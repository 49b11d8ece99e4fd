import { createHash, timingSafeEqual } from "node:crypto";
import { KEY_STATES } from "../admin/schemas";
import { authenticate } from "../auth/authenticate";
import type { Db } from "../db";
import { env } from "../env";
import { countKeysByState, OUTCOMES, outcomeTotals } from "../idempotency";
import { outboxStats } from "../outbox/stats";
import { completerBacklog } from "../payments/completer";
import { latestReconciliation } from "../payments/reconciler";
import { type Metrics, metrics } from "./registry";

/**
 * Sets the gauges read from the database: a handful of aggregate queries, none proportional to
 * the ledger (the full ledger check stays an admin action).
 */
export async function refreshDatabaseGauges(prisma: Db, m: Metrics = metrics): Promise<void> {
  const [outcomes, keys, backlog, outbox, reconciliation] = await Promise.all([
    outcomeTotals(prisma),
    countKeysByState(prisma),
    completerBacklog(prisma),
    outboxStats(prisma),
    latestReconciliation(prisma),
  ]);
  m.outcomes.reset();
  for (const o of OUTCOMES) m.outcomes.inc({ outcome: o }, outcomes[o]);
  for (const s of KEY_STATES) m.keys.set({ state: s }, keys[s]);
  m.completerBacklog.set(backlog.waiting);
  m.completerOldest.set(backlog.oldestIdleSeconds);
  m.outbox.set({ state: "pending" }, outbox.pending);
  m.outbox.set({ state: "sent" }, outbox.sent);
  m.outbox.set({ state: "failing" }, outbox.failing);
  m.outboxOldest.set(outbox.oldestPendingAgeSeconds ?? 0);
  m.consumed.set({ consumer: "receipts" }, outbox.processed);
  if (reconciliation) m.reconciliation.set(reconciliation.mismatches.length);
  else m.reconciliation.reset();
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The scraper's own Bearer METRICS_TOKEN, or the admin (its token or session). */
async function mayScrape(req: Request, prisma: Db): Promise<boolean> {
  const bearer = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
  if (bearer && env.METRICS_TOKEN && sameSecret(bearer, env.METRICS_TOKEN)) return true;
  const principal = await authenticate(prisma, req.headers, {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  return principal.isAdmin;
}

/** GET /api/metrics in the Prometheus text format; 401 without the metrics or admin token. */
export async function metricsResponse(req: Request, prisma: Db, m: Metrics = metrics): Promise<Response> {
  if (!(await mayScrape(req, prisma))) {
    return new Response("Metrics token or admin authentication required.\n", {
      status: 401,
      headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="metrics"' },
    });
  }
  await refreshDatabaseGauges(prisma, m);
  return new Response(await m.registry.metrics(), {
    headers: { "content-type": m.registry.contentType, "cache-control": "no-store" },
  });
}
