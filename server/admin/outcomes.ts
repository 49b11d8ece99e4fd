import type { Db } from "../db";
import { type Outcome, outcomeSeries } from "../keys";
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
 * last, with zeros for the minutes nothing happened.
 */
export async function outcomeChart(prisma: Db, minutes = 60, now = new Date()): Promise<TOutcomeChart> {
  const start = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - (minutes - 1) * MINUTE_MS;
  const rows = await outcomeSeries(prisma, minutes);
  const series = CHART_OUTCOMES.map((outcome) => ({ outcome, points: new Array<number>(minutes).fill(0) }));
  for (const row of rows) {
    const index = Math.round((row.bucket.getTime() - start) / MINUTE_MS);
    const line = series.find((s) => s.outcome === row.outcome);
    if (line && index >= 0 && index < minutes) line.points[index] = Number(row.count);
  }
  return {
    start: new Date(start).toISOString(),
    minutes,
    series: series.map((s) => ({ ...s, total: s.points.reduce((a, b) => a + b, 0) })),
  };
}
