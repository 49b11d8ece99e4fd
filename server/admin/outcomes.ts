import { type Outcome, outcomeSeries } from "@idempotent-checkout/idempotency/admin";
import type { Db } from "../db";
import { keyDb } from "../keys";
import type { TOutcomeChart } from "./schemas";

/** The outcomes the admin chart shows, in its order: what a client sees, then what recovers. */
export const CHART_OUTCOMES = [
  "claimed",
  "replayed",
  "conflict_in_flight",
  "fingerprint_mismatch",
  "lease_takeover",
  "released",
] as const satisfies readonly Outcome[];

const MINUTE_MS = 60_000;

/**
 * Per-minute counts of the chart's outcomes over the last `minutes` minutes, the current one
 * last, with zeros for the minutes nothing happened: of one procedure, or of all summed. Says
 * which procedures had counts in the window, so the page can chart each apart.
 */
export async function outcomeChart(
  prisma: Db,
  minutes = 60,
  opts: { procedure?: string; now?: Date } = {},
): Promise<TOutcomeChart> {
  const now = opts.now ?? new Date();
  const start = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - (minutes - 1) * MINUTE_MS;
  const all = await outcomeSeries(keyDb(prisma), minutes);
  const procedures = [...new Set(all.map((r) => r.procedure).filter((p) => p !== ""))].sort();
  const rows = opts.procedure === undefined ? all : all.filter((r) => r.procedure === opts.procedure);
  const series = CHART_OUTCOMES.map((outcome) => ({ outcome, points: new Array<number>(minutes).fill(0) }));
  for (const row of rows) {
    const index = Math.round((row.bucket.getTime() - start) / MINUTE_MS);
    const line = series.find((s) => s.outcome === row.outcome);
    if (line && index >= 0 && index < minutes)
      line.points[index] = (line.points[index] ?? 0) + Number(row.count);
  }
  return {
    start: new Date(start).toISOString(),
    minutes,
    procedure: opts.procedure ?? null,
    procedures,
    series: series.map((s) => ({ ...s, total: s.points.reduce((a, b) => a + b, 0) })),
  };
}
