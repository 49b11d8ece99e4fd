import type { Db } from "../db";

/**
 * Deletes outbox rows sent longer ago than the retention and the consumers' processed-message
 * marks as old, in bounded batches by their own indexes (decision 0222). A mark only guards
 * against a redelivery, and the queue keeps no message that long; an unsent row is never taken.
 */
export async function pruneSentMessages(
  prisma: Db,
  opts: { olderThanSeconds: number; batchSize?: number; maxBatches?: number },
): Promise<{ outbox: number; processed: number }> {
  const batchSize = opts.batchSize ?? 500;
  const total = { outbox: 0, processed: 0 };
  for (let i = 0; i < (opts.maxBatches ?? 20); i++) {
    const [row] = await prisma.$queryRaw<{ outbox: number; processed: number }[]>`
      WITH sent AS (
        SELECT id FROM outbox_messages
         WHERE sent_at IS NOT NULL
           AND sent_at < now() - make_interval(secs => ${opts.olderThanSeconds}::float8)
         ORDER BY sent_at
         LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED),
      marks AS (
        SELECT consumer, message_id FROM processed_messages
         WHERE processed_at < now() - make_interval(secs => ${opts.olderThanSeconds}::float8)
         ORDER BY processed_at
         LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED),
      outbox AS (DELETE FROM outbox_messages WHERE id IN (SELECT id FROM sent) RETURNING 1),
      processed AS (
        DELETE FROM processed_messages p USING marks
         WHERE p.consumer = marks.consumer AND p.message_id = marks.message_id RETURNING 1)
      SELECT (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM processed)::int AS processed`;
    total.outbox += row?.outbox ?? 0;
    total.processed += row?.processed ?? 0;
    if ((row?.outbox ?? 0) < batchSize && (row?.processed ?? 0) < batchSize) break;
  }
  return total;
}
