import { counters } from "./counters.js";
import type { KeyDb } from "./db.js";
import { sql } from "./sql.js";

/**
 * Deletes expired keys in bounded batches: completed ones by the expiry index (which holds only
 * completed keys), unfinished ones by the recovery index (which holds every unfinished key, a few).
 * SKIP LOCKED lets several sweepers share the work, and
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
  const byProcedure = new Map<string, number>();
  for (let i = 0; i < maxBatches; i++) {
    const rows = await db.query<{ procedure: string; n: number }>(sql`
      WITH unfinished AS (
        SELECT id FROM idempotency_keys
         WHERE state = 'in_progress' AND expires_at <= now()
           AND NOT (coalesce(locked_until > now(), false) OR recovery_point <> 'started')
         LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED
      ), completed AS (
        SELECT id FROM idempotency_keys
         WHERE state = 'completed' AND expires_at <= now()
         ORDER BY expires_at
         LIMIT greatest(${batchSize} - (SELECT count(*) FROM unfinished), 0)
         FOR UPDATE SKIP LOCKED
      ), swept AS (
        DELETE FROM idempotency_keys
         WHERE id IN (SELECT id FROM completed UNION ALL SELECT id FROM unfinished)
        RETURNING procedure)
      SELECT procedure, count(*)::int AS n FROM swept GROUP BY procedure`);
    let n = 0;
    for (const r of rows) {
      n += Number(r.n);
      byProcedure.set(r.procedure, (byProcedure.get(r.procedure) ?? 0) + Number(r.n));
    }
    deleted += n;
    if (n < batchSize) break;
  }
  for (const [procedure, n] of byProcedure) counters.increment("expired_swept", procedure, n);
  return deleted;
}
