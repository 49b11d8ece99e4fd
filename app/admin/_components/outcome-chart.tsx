import type { TOutcomeChart } from "@/server/admin/schemas";

const LABELS: Record<string, { name: string; hint: string }> = {
  claimed: { name: "Claimed", hint: "new requests that ran" },
  replayed: { name: "Replayed", hint: "stored response sent again" },
  conflict_in_flight: { name: "409 in flight", hint: "duplicate while running" },
  fingerprint_mismatch: { name: "422 mismatch", hint: "key reused, other body" },
  lease_takeover: { name: "Takeovers", hint: "lease expired, resumed" },
  released: { name: "Released", hint: "given back after an error" },
};

const WIDTH = 600;
const HEIGHT = 40;

const minuteLabel = (start: number, i: number) => new Date(start + i * 60_000).toISOString().slice(11, 16);

/**
 * Small multiples: one strip of per-minute bars per outcome, each scaled to its own peak, so a
 * handful of 409s stays visible next to hundreds of claims. The hour's total sits beside each.
 */
export function OutcomeChart({ chart }: { chart: TOutcomeChart }) {
  const start = Date.parse(chart.start);
  const slot = WIDTH / chart.minutes;
  const captionId = `chart-caption-${(chart.procedure ?? "all").replace(/[^a-zA-Z0-9_-]/g, "-")}`;
  return (
    <figure className="chart" aria-labelledby={captionId}>
      <figcaption id={captionId}>
        {chart.procedure === null
          ? `Idempotency outcomes per minute, last ${chart.minutes} minutes`
          : `Outcomes of ${chart.procedure} per minute, last ${chart.minutes} minutes`}
      </figcaption>
      <ul className="chart-rows">
        {chart.series.map((s) => {
          const label = LABELS[s.outcome] ?? { name: s.outcome, hint: "" };
          const peak = Math.max(0, ...s.points);
          return (
            <li key={s.outcome} className={`chart-row chart-${s.outcome}`}>
              <span className="chart-label">
                <strong>{label.name}</strong>
                <span className="muted">{label.hint}</span>
              </span>
              <svg
                className="chart-strip"
                viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
                preserveAspectRatio="none"
                role="img"
                aria-label={`${label.name}: ${s.total} in the last hour${peak > 0 ? `, at most ${peak} in a minute` : ""}`}
              >
                <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} className="chart-baseline" />
                {s.points.map((n, i) =>
                  n === 0 ? null : (
                    <rect
                      // biome-ignore lint/suspicious/noArrayIndexKey: a minute's position is its identity
                      key={i}
                      x={i * slot + 1}
                      width={Math.max(1, slot - 2)}
                      y={HEIGHT - Math.max(3, (n / peak) * HEIGHT)}
                      height={Math.max(3, (n / peak) * HEIGHT)}
                    >
                      <title>{`${minuteLabel(start, i)} UTC: ${n}`}</title>
                    </rect>
                  ),
                )}
              </svg>
              <span className="chart-total" title={peak > 0 ? `peak ${peak} per minute` : undefined}>
                {s.total}
              </span>
            </li>
          );
        })}
      </ul>
      <div className="chart-row chart-axis" aria-hidden="true">
        <span />
        <span className="chart-ticks">
          <span>{minuteLabel(start, 0)} UTC</span>
          <span>{minuteLabel(start, Math.floor(chart.minutes / 2))}</span>
          <span>now</span>
        </span>
        <span />
      </div>
    </figure>
  );
}
