import type { Db } from "../db";

export interface PruneOptions {
  /** Rows with no activity for this long go. */
  olderThanSeconds: number;
  batchSize?: number;
  maxBatches?: number;
}

/**
 * Deletes settled messages (delivered, or failed for good) with no activity for the retention,
 * and their attempts, in bounded batches (decision 0222). A settled message's `next_attempt_at`
 * is its last claim's lease end, so the (status, next_attempt_at) index finds them. SKIP LOCKED
 * steps over a row a replay or a delivery holds, and each batch is its own short statement: a
 * delivery never waits for the prune. A pending message is never pruned, however old.
 */
export async function pruneWebhookMessages(prisma: Db, opts: PruneOptions): Promise<number> {
  const batchSize = opts.batchSize ?? 500;
  let deleted = 0;
  for (let i = 0; i < (opts.maxBatches ?? 20); i++) {
    const [row] = await prisma.$queryRaw<{ n: number }[]>`
      WITH doomed AS (
        SELECT id FROM webhook_messages
         WHERE status IN ('succeeded', 'failed')
           AND next_attempt_at < now() - make_interval(secs => ${opts.olderThanSeconds}::float8)
         ORDER BY status, next_attempt_at
         LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED),
      attempts AS (DELETE FROM webhook_attempts WHERE message_id IN (SELECT id FROM doomed)),
      messages AS (DELETE FROM webhook_messages WHERE id IN (SELECT id FROM doomed) RETURNING 1)
      SELECT count(*)::int AS n FROM messages`;
    const n = row?.n ?? 0;
    deleted += n;
    if (n < batchSize) break;
  }
  return deleted;
}
