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

/** One row of the counts table: a minute, a procedure, an outcome. */
type CountKey = readonly [bucket: string, procedure: string, outcome: Outcome];

/**
 * Counted in process (no round trip on the request path) and flushed into per-minute rows per
 * procedure, so that several processes add up and the admin chart can show the last hour of each
 * idempotent operation (payments, refunds) apart.
 */
export class OutcomeCounters {
  private pending = new Map<string, { key: CountKey; n: number }>();
  private totals = new Map<Outcome, number>();

  /** `procedure` is the key's (IdempotencyOptions.procedure); "" when the caller has none. */
  increment(outcome: Outcome, procedure = "", by = 1): void {
    const bucket = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
    this.add([bucket, procedure, outcome], by);
    this.totals.set(outcome, (this.totals.get(outcome) ?? 0) + by);
  }

  private add(key: CountKey, n: number): void {
    const k = JSON.stringify(key);
    const seen = this.pending.get(k);
    if (seen) seen.n += n;
    else this.pending.set(k, { key, n });
  }

  /** Counts seen by this process since it started. */
  processTotals(): Record<Outcome, number> {
    return Object.fromEntries(OUTCOMES.map((o) => [o, this.totals.get(o) ?? 0])) as Record<Outcome, number>;
  }

  async flush(db: KeyDb<unknown>): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    try {
      for (const { key, n } of batch) {
        const [bucket, procedure, outcome] = key;
        await db.execute(sql`
          INSERT INTO idempotency_outcome_counts (bucket, procedure, outcome, count)
          VALUES (${bucket}::timestamptz, ${procedure}, ${outcome}, ${n})
          ON CONFLICT (bucket, procedure, outcome) DO UPDATE SET count = idempotency_outcome_counts.count + EXCLUDED.count`);
      }
    } catch (error) {
      for (const { key, n } of batch) this.add(key, n);
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

/**
 * Per-minute counts for the last `minutes` minutes, for the admin chart, per procedure (the
 * procedures summed when `procedure` is omitted).
 */
export async function outcomeSeries(db: KeyDb<unknown>, minutes = 60, procedure?: string) {
  await counters.flush(db);
  const rows = await db.query<{
    bucket: Date | string;
    procedure: string;
    outcome: string;
    count: bigint | string;
  }>(sql`
    SELECT bucket, procedure, outcome, count FROM idempotency_outcome_counts
     WHERE bucket >= date_trunc('minute', now()) - make_interval(mins => ${minutes})
       AND (${procedure ?? null}::text IS NULL OR procedure = ${procedure ?? null}::text)
     ORDER BY bucket`);
  return rows.map((r) => ({ ...r, bucket: new Date(r.bucket), count: BigInt(r.count) }));
}
