import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { TOutcomeChart } from "@/server/admin/schemas";
import { OutcomeChart } from "./outcome-chart";

const points = (at: Record<number, number>) => Array.from({ length: 60 }, (_, i) => at[i] ?? 0);
const total = (p: number[]) => p.reduce((a, b) => a + b, 0);
const series = (outcome: TOutcomeChart["series"][number]["outcome"], p: number[]) => ({
  outcome,
  points: p,
  total: total(p),
});

function render(chart: TOutcomeChart) {
  return renderToStaticMarkup(createElement(OutcomeChart, { chart }));
}

const base = { start: "2026-12-05T10:00:00.000Z", minutes: 60, procedure: null, procedures: [] };

describe("OutcomeChart", () => {
  it("draws a strip per outcome with counts, with its peak and zero as its scale; empty ones folded", () => {
    const html = render({
      ...base,
      series: [
        series("claimed", points({ 3: 4, 10: 12 })),
        series("replayed", points({ 10: 2 })),
        series("conflict_in_flight", points({})),
        series("released", points({})),
      ],
    });
    expect(html.match(/role="img"/g)).toHaveLength(2);
    expect(html).toContain('aria-label="Claimed: 16 in the last hour, at most 12 in a minute"');
    expect(html).toMatch(/class="chart-scale"[^>]*><span>12<\/span><span>0<\/span>/);
    expect(html).toMatch(/class="chart-scale"[^>]*><span>2<\/span><span>0<\/span>/);
    // The empty rows: one closed line naming them, no strips.
    expect(html).toMatch(/<details class="chart-empty"><summary>2 empty rows/);
    expect(html).toContain("409 in flight");
    expect(html).not.toContain('aria-label="409 in flight');
    // Time ticks each quarter hour (UTC, as the caption says), the last one now.
    expect(html).toContain("last 60 minutes (UTC)");
    for (const tick of [">10:00<", ">10:15<", ">10:30<", ">10:45<", ">now<"]) expect(html).toContain(tick);
  });

  it("says so when the hour is empty, with every outcome folded", () => {
    const html = render({ ...base, series: [series("claimed", points({})), series("replayed", points({}))] });
    expect(html).toContain("Nothing in the last 60 minutes.");
    expect(html).not.toContain('role="img"');
    expect(html).toContain("2 empty rows");
  });
});
