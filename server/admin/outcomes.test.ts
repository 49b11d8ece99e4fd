import { describe, expect, it } from "vitest";
import { db } from "../db";
import { adminCaller } from "../test/admin";
import { CHART_OUTCOMES } from "./outcomes";

const MINUTE = 60_000;

async function addCount(bucket: Date, outcome: string, n: number, procedure = "payments.create") {
  await db().$executeRaw`
    INSERT INTO idempotency_outcome_counts (bucket, procedure, outcome, count) VALUES (${bucket.toISOString()}::timestamptz, ${procedure}, ${outcome}, ${n})
    ON CONFLICT (bucket, procedure, outcome) DO UPDATE SET count = idempotency_outcome_counts.count + EXCLUDED.count`;
}

describe("admin.outcomes.chart", () => {
  it("puts each minute's counters at their place in the last hour, with zeros between", async () => {
    const admin = adminCaller();
    const before = await admin.admin.outcomes.chart();
    const thisMinute = Math.floor(Date.now() / MINUTE) * MINUTE;
    const halfAnHourAgo = new Date(thisMinute - 30 * MINUTE);
    await addCount(halfAnHourAgo, "released", 7);
    await addCount(new Date(thisMinute - 3 * 60 * MINUTE), "released", 1000);
    const after = await admin.admin.outcomes.chart();

    expect(after.minutes).toBe(60);
    expect(after.series.map((s) => s.outcome)).toEqual([...CHART_OUTCOMES]);
    for (const s of after.series) expect(s.points).toHaveLength(60);
    const index = (halfAnHourAgo.getTime() - Date.parse(after.start)) / MINUTE;
    expect(index).toBeGreaterThanOrEqual(28);
    expect(index).toBeLessThanOrEqual(29);
    const released = (c: typeof after) => c.series.find((s) => s.outcome === "released");
    const shift = (Date.parse(after.start) - Date.parse(before.start)) / MINUTE;
    const was = released(before)?.points[index + shift] ?? 0;
    expect(released(after)?.points[index]).toBe(was + 7);
    // Three hours ago is outside the chart, so the hour's total grew by exactly the 7.
    expect((released(after)?.total ?? 0) - (released(before)?.total ?? 0)).toBe(7);
  });

  it("shows each procedure's outcomes apart, and all of them summed", async () => {
    const admin = adminCaller();
    const procedure = `test.procedure.${Date.now()}`;
    const before = await admin.admin.outcomes.chart();
    const thisMinute = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
    await addCount(thisMinute, "claimed", 5, procedure);
    const own = await admin.admin.outcomes.chart({ procedure });
    const all = await admin.admin.outcomes.chart();
    const claimed = (c: typeof own) => c.series.find((s) => s.outcome === "claimed")?.total ?? 0;
    expect(own.procedure).toBe(procedure);
    expect(claimed(own)).toBe(5);
    expect(all.procedure).toBeNull();
    expect(all.procedures).toContain(procedure);
    expect(claimed(all) - claimed(before)).toBeGreaterThanOrEqual(5);
    const other = await admin.admin.outcomes.chart({ procedure: `${procedure}.other` });
    expect(claimed(other)).toBe(0);
  });
});
