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
/** Time ticks: the window in quarters. */
const TICKS = 4;

const labelOf = (outcome: string) => LABELS[outcome] ?? { name: outcome, hint: "" };
const minuteLabel = (start: number, i: number) => new Date(start + i * 60_000).toISOString().slice(11, 16);

/**
 * Small multiples: one strip of per-minute bars per outcome, each scaled to its own peak (labelled
 * beside it, so a handful of 409s stays readable next to hundreds of claims); the hour's total at
 * the end. Outcomes with nothing in the hour are folded into one line that opens to name them.
 */
export function OutcomeChart({ chart }: { chart: TOutcomeChart }) {
  const start = Date.parse(chart.start);
  const slot = WIDTH / chart.minutes;
  const captionId = `chart-caption-${(chart.procedure ?? "all").replace(/[^a-zA-Z0-9_-]/g, "-")}`;
  const ticks = Array.from({ length: TICKS + 1 }, (_, i) => Math.round((i * chart.minutes) / TICKS));
  const shown = chart.series.filter((s) => s.total > 0);
  const empty = chart.series.filter((s) => s.total === 0);
  return (
    <figure className="chart" aria-labelledby={captionId}>
      <figcaption id={captionId}>
        {chart.procedure === null
          ? `Idempotency outcomes per minute, last ${chart.minutes} minutes (UTC)`
          : `Outcomes of ${chart.procedure} per minute, last ${chart.minutes} minutes (UTC)`}
      </figcaption>
      {shown.length === 0 ? (
        <p className="muted">Nothing in the last {chart.minutes} minutes.</p>
      ) : (
        <>
          <ul className="chart-rows">
            {shown.map((s) => {
              const label = labelOf(s.outcome);
              const peak = Math.max(...s.points);
              return (
                <li key={s.outcome} className={`chart-row chart-${s.outcome}`}>
                  <span className="chart-label">
                    <strong>{label.name}</strong>
                    <span className="muted">{label.hint}</span>
                  </span>
                  {/* The strip's own scale: its top is the peak minute, its floor zero. */}
                  <span className="chart-scale" aria-hidden="true">
                    <span>{peak}</span>
                    <span>0</span>
                  </span>
                  <svg
                    className="chart-strip"
                    viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
                    preserveAspectRatio="none"
                    role="img"
                    aria-label={`${label.name}: ${s.total} in the last hour, at most ${peak} in a minute`}
                  >
                    {ticks.map((t) => (
                      <line key={t} x1={t * slot} y1="0" x2={t * slot} y2={HEIGHT} className="chart-grid" />
                    ))}
                    <line x1="0" y1="0.5" x2={WIDTH} y2="0.5" className="chart-grid" />
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
                  <span className="chart-total" title={`peak ${peak} per minute`}>
                    {s.total}
                  </span>
                </li>
              );
            })}
          </ul>
          <div className="chart-row chart-axis" aria-hidden="true">
            <span />
            <span className="chart-scale-unit">/min</span>
            <span className="chart-ticks">
              {ticks.map((t, i) => (
                <span key={t} style={{ left: `${(100 * t) / chart.minutes}%` }} data-edge={edge(i)}>
                  {t === chart.minutes ? "now" : minuteLabel(start, t)}
                </span>
              ))}
            </span>
            <span className="chart-total-unit">hour</span>
          </div>
        </>
      )}
      {empty.length > 0 && (
        <details className="chart-empty">
          <summary>
            {empty.length} empty {empty.length === 1 ? "row" : "rows"} (none in the last {chart.minutes}{" "}
            minutes)
          </summary>
          <ul>
            {empty.map((s) => (
              <li key={s.outcome}>
                <strong>{labelOf(s.outcome).name}</strong>{" "}
                <span className="muted">{labelOf(s.outcome).hint}</span>: 0
              </li>
            ))}
          </ul>
        </details>
      )}
    </figure>
  );
}

/** The first and last tick labels stay inside the strip's width. */
function edge(i: number): "first" | "last" | undefined {
  if (i === 0) return "first";
  return i === TICKS ? "last" : undefined;
}
