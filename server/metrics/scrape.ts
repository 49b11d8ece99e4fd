import {
  countKeysByState,
  KEY_STATES,
  OUTCOMES,
  outcomeTotals,
} from "@idempotent-checkout/idempotency/admin";
import { authorizationStats } from "../authorizations";
import type { Db } from "../db";
import { keyDb } from "../keys";
import { outboxStats } from "../outbox/stats";
import { payment } from "../payments/operation";
import { latestReconciliation } from "../reconciler";
import { REFUND_STATUSES, refund, refundsByStatus } from "../refunds";
import { webhookStats } from "../webhooks";
import { type Metrics, metrics } from "./registry";

/**
 * Sets the gauges read from the database: a handful of aggregate queries, none proportional to
 * the ledger (the full ledger check stays an admin action).
 */
export async function refreshDatabaseGauges(prisma: Db, m: Metrics = metrics): Promise<void> {
  const [outcomes, keys, backlog, outbox, reconciliation, refundBacklog, refunds, webhooks, authorizations] =
    await Promise.all([
      outcomeTotals(keyDb(prisma)),
      countKeysByState(keyDb(prisma)),
      payment.backlog(prisma),
      outboxStats(prisma),
      latestReconciliation(prisma),
      refund.backlog(prisma),
      refundsByStatus(prisma),
      webhookStats(prisma),
      authorizationStats(prisma),
    ]);
  m.outcomes.reset();
  for (const o of OUTCOMES) m.outcomes.inc({ outcome: o }, outcomes[o]);
  for (const s of KEY_STATES) m.keys.set({ state: s }, keys[s]);
  m.completerBacklog.set(backlog.waiting);
  m.completerOldest.set(backlog.oldestIdleSeconds);
  m.refundCompleterBacklog.set(refundBacklog.waiting);
  for (const s of REFUND_STATUSES) m.refunds.set({ status: s }, refunds[s]);
  m.authorizationActions.reset();
  for (const a of authorizations.actions)
    m.authorizationActions.set({ kind: a.kind, status: a.status, reason: a.reason }, a.count);
  m.authorized.set({ window: "all" }, authorizations.authorized);
  m.authorized.set({ window: "expiring" }, authorizations.expiringWithinDay);
  m.outbox.set({ state: "pending" }, outbox.pending);
  m.outbox.set({ state: "sent" }, outbox.sent);
  m.outbox.set({ state: "failing" }, outbox.failing);
  m.outboxOldest.set(outbox.oldestPendingAgeSeconds ?? 0);
  m.consumed.set({ consumer: "receipts" }, outbox.processed);
  m.webhookDeliveries.reset();
  for (const outcome of ["succeeded", "failed"] as const)
    m.webhookDeliveries.inc({ outcome }, webhooks.attempts[outcome]);
  m.webhookPending.set(webhooks.pending);
  m.webhookLag.set(webhooks.lagSeconds);
  m.webhookDisabledEndpoints.set(webhooks.disabledEndpoints);
  if (reconciliation) {
    m.reconciliation.set(reconciliation.mismatches.length);
    m.reconciliationProviderError.set(reconciliation.providerError === null ? 0 : 1);
  } else {
    m.reconciliation.reset();
    m.reconciliationProviderError.reset();
  }
}
