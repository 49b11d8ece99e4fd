import type { KeyDb } from "./db.js";
import { sql } from "./sql.js";

export const OUTCOMES = [
  "claimed",
  "replayed",
  "conflict_in_flight",
  "fingerprint_mismatch",
  "lease_takeover",
  "fenced",
  "completed",
  "released",
  "refused",
  "expired_swept",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * Counted in process (no round trip on the request path) and flushed into per-minute rows, so
 * that several processes add up and the admin chart can show the last hour.
 */
class OutcomeCounters {
  private pending = new Map<string, number>();
  private totals = new Map<Outcome, number>();

  increment(outcome: Outcome, by = 1): void {
    const bucket = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
    const k = `${bucket}|${outcome}`;
    this.pending.set(k, (this.pending.get(k) ?? 0) + by);
    this.totals.set(outcome, (this.totals.get(outcome) ?? 0) + by);
  }

  /** Counts seen by this process since it started. */
  processTotals(): Record<Outcome, number> {
    return Object.fromEntries(OUTCOMES.map((o) => [o, this.totals.get(o) ?? 0])) as Record<Outcome, number>;
  }

  async flush(db: KeyDb<unknown>): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending = new Map();
    try {
      for (const [k, n] of batch) {
        const [bucket, outcome] = k.split("|") as [string, string];
        await db.execute(sql`
          INSERT INTO idempotency_outcome_counts (bucket, outcome, count)
          VALUES (${bucket}::timestamptz, ${outcome}, ${n})
          ON CONFLICT (bucket, outcome) DO UPDATE SET count = idempotency_outcome_counts.count + EXCLUDED.count`);
      }
    } catch (error) {
      for (const [k, n] of batch) this.pending.set(k, (this.pending.get(k) ?? 0) + n);
      throw error;
    }
  }
}

/**
 * Flushes this process's counts every few seconds, and once more when stopped. Every process that
 * serves requests runs it (web servers with BACKGROUND_JOBS=off included), or its counts would
 * never reach the totals that /api/metrics reads.
 */
export function startCounterFlush(
  db: KeyDb<unknown>,
  opts: { everyMs?: number; onError?: (error: unknown) => void } = {},
): () => Promise<void> {
  const flush = () =>
    counters.flush(db).catch((error: unknown) => {
      // A failed flush keeps its counts for the next one; the app decides whether to log it.
      opts.onError?.(error);
    });
  const everyMs = opts.everyMs ?? 5_000;
  const timer = setInterval(flush, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await flush();
  };
}

const holder = globalThis as unknown as { idempotencyCounters?: OutcomeCounters };
holder.idempotencyCounters ??= new OutcomeCounters();
export const counters: OutcomeCounters = holder.idempotencyCounters;

/** Totals across all processes (after flushing this one's). */
export async function outcomeTotals(db: KeyDb<unknown>): Promise<Record<Outcome, number>> {
  await counters.flush(db);
  const rows = await db.query<{ outcome: string; count: bigint | string }>(sql`
    SELECT outcome, sum(count)::bigint AS count FROM idempotency_outcome_counts GROUP BY outcome`);
  const totals = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of rows) if (r.outcome in totals) totals[r.outcome as Outcome] = Number(r.count);
  return totals;
}

/** Per-minute counts for the last `minutes` minutes, for the admin chart. */
export async function outcomeSeries(db: KeyDb<unknown>, minutes = 60) {
  await counters.flush(db);
  const rows = await db.query<{ bucket: Date; outcome: string; count: bigint | string }>(sql`
    SELECT bucket, outcome, count FROM idempotency_outcome_counts
     WHERE bucket >= date_trunc('minute', now()) - make_interval(mins => ${minutes})
     ORDER BY bucket`);
  return rows.map((r) => ({ ...r, count: BigInt(r.count) }));
}
