import { counters } from "./counters.js";
import type { KeyDb } from "./db.js";
import { sql } from "./sql.js";

/**
 * Deletes expired keys in bounded batches. SKIP LOCKED lets several sweepers share the work, and
 * a key still in progress under a live lease is never taken, however old. A released key
 * (locked_until NULL) has no live lease: without the coalesce, NOT(... AND NULL) would keep it.
 * An in-progress key past its first recovery point is kept until it completes (the completer
 * drives it): deleting it would let a reuse derive new downstream keys and act twice.
 */
export async function sweepExpiredKeys(
  db: KeyDb<unknown>,
  opts: { batchSize?: number; maxBatches?: number } = {},
) {
  const batchSize = opts.batchSize ?? 500;
  const maxBatches = opts.maxBatches ?? 20;
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await db.execute(sql`
      DELETE FROM idempotency_keys WHERE id IN (
        SELECT id FROM idempotency_keys
         WHERE expires_at <= now()
           AND NOT (state = 'in_progress' AND (coalesce(locked_until > now(), false) OR recovery_point <> 'started'))
         ORDER BY expires_at
         LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED)`);
    deleted += n;
    if (n < batchSize) break;
  }
  if (deleted > 0) counters.increment("expired_swept", deleted);
  return deleted;
}
