import type { Db } from "../db";

export interface OutboxStats {
  pending: number;
  sent: number;
  /** Age of the oldest unsent message; null when nothing is pending. */
  oldestPendingAgeSeconds: number | null;
  /** Pending messages whose last publish failed (waiting out their backoff). */
  failing: number;
  /** Messages the receipts consumer has processed (each once, however often delivered). */
  processed: number;
}

/** For the admin page: how far the relay is behind, and how much the consumer has done. */
export async function outboxStats(prisma: Db, consumer = "receipts"): Promise<OutboxStats> {
  const [row] = await prisma.$queryRaw<
    { pending: number; sent: number; oldest_age: number | null; failing: number; processed: number }[]
  >`
    SELECT (SELECT count(*)::int FROM outbox_messages WHERE sent_at IS NULL) AS pending,
           (SELECT count(*)::int FROM outbox_messages WHERE sent_at IS NOT NULL) AS sent,
           (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM outbox_messages WHERE sent_at IS NULL) AS oldest_age,
           (SELECT count(*)::int FROM outbox_messages WHERE sent_at IS NULL AND last_error IS NOT NULL) AS failing,
           (SELECT count(*)::int FROM processed_messages WHERE consumer = ${consumer}) AS processed`;
  return {
    pending: row?.pending ?? 0,
    sent: row?.sent ?? 0,
    oldestPendingAgeSeconds: row?.oldest_age == null ? null : Math.max(0, Math.floor(row.oldest_age)),
    failing: row?.failing ?? 0,
    processed: row?.processed ?? 0,
  };
}
