import { authenticate } from "../auth/authenticate";
import type { Db } from "../db";
import { env } from "../env";
import { OUTCOMES, type Outcome, outcomeTotals } from "../idempotency";
import { verifyLedger } from "../ledger";
import { type OutboxStats, outboxStats } from "../outbox/stats";
import { latestReconciliation } from "../payments/reconciler";
import { countKeysByState } from "./keys";
import { KEY_STATES, type TKeyState } from "./schemas";

export interface MetricsSnapshot {
  outcomes: Record<Outcome, number>;
  keys: Record<TKeyState, number>;
  ledgerBalanced: boolean;
  /** Mismatches in the reconciler's latest report; null before its first run. */
  reconciliationMismatches: number | null;
  outbox: OutboxStats;
}

export async function collectMetrics(prisma: Db): Promise<MetricsSnapshot> {
  const [outcomes, keys, ledger, reconciliation, outbox] = await Promise.all([
    outcomeTotals(prisma),
    countKeysByState(prisma),
    verifyLedger(prisma),
    latestReconciliation(prisma),
    outboxStats(prisma),
  ]);
  return {
    outcomes,
    keys,
    ledgerBalanced: ledger.balanced,
    reconciliationMismatches: reconciliation ? reconciliation.mismatches.length : null,
    outbox,
  };
}

/** The Prometheus text exposition format, version 0.0.4. */
export function renderPrometheus(m: MetricsSnapshot): string {
  const lines = [
    "# HELP idempotency_outcomes_total Idempotency outcomes, summed across processes.",
    "# TYPE idempotency_outcomes_total counter",
    ...OUTCOMES.map((o) => `idempotency_outcomes_total{outcome="${o}"} ${m.outcomes[o]}`),
    "# HELP idempotency_keys Idempotency keys by state (abandoned: in progress with its lease run out).",
    "# TYPE idempotency_keys gauge",
    ...KEY_STATES.map((s) => `idempotency_keys{state="${s}"} ${m.keys[s]}`),
    "# HELP ledger_balanced 1 when every ledger transaction and currency sums to zero and balances match their entries.",
    "# TYPE ledger_balanced gauge",
    `ledger_balanced ${m.ledgerBalanced ? 1 : 0}`,
    "# HELP outbox_messages Outbox messages by state.",
    "# TYPE outbox_messages gauge",
    `outbox_messages{state="pending"} ${m.outbox.pending}`,
    `outbox_messages{state="sent"} ${m.outbox.sent}`,
    "# HELP outbox_oldest_pending_age_seconds Age of the oldest unsent outbox message (0 when none).",
    "# TYPE outbox_oldest_pending_age_seconds gauge",
    `outbox_oldest_pending_age_seconds ${m.outbox.oldestPendingAgeSeconds ?? 0}`,
    "# HELP consumer_processed_messages_total Messages the receipts consumer has processed, each once.",
    "# TYPE consumer_processed_messages_total counter",
    `consumer_processed_messages_total{consumer="receipts"} ${m.outbox.processed}`,
  ];
  if (m.reconciliationMismatches !== null) {
    lines.push(
      "# HELP reconciliation_mismatches Mismatches between provider and ledger in the latest reconciliation.",
      "# TYPE reconciliation_mismatches gauge",
      `reconciliation_mismatches ${m.reconciliationMismatches}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** GET /api/metrics: admin only (Bearer ADMIN_TOKEN or the admin session), 401 otherwise. */
export async function metricsResponse(req: Request, prisma: Db): Promise<Response> {
  const principal = await authenticate(prisma, req.headers, {
    sessionSecret: env.SESSION_SECRET,
    adminToken: env.ADMIN_TOKEN,
  });
  if (!principal.isAdmin) {
    return new Response("Admin authentication required.\n", {
      status: 401,
      headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="admin"' },
    });
  }
  return new Response(renderPrometheus(await collectMetrics(prisma)), {
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" },
  });
}
