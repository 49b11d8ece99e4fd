import type { ReactNode } from "react";
import type { TKeyState } from "@/server/admin/schemas";
import { json, relativeTime, STATE_LABELS, utc } from "./format";

export function StateBadge({ state }: { state: TKeyState }) {
  return <span className={`badge badge-${state}`}>{STATE_LABELS[state]}</span>;
}

export function Time({ iso, now, empty = "—" }: { iso: string | null; now: number; empty?: string }) {
  if (!iso) return <span className="muted">{empty}</span>;
  return (
    <time dateTime={iso} title={utc(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <section aria-label={label}>
      <pre className="json">{json(value)}</pre>
    </section>
  );
}

/** A term and its value; "wide" ones (a fingerprint) take two columns where there are two. */
export type Fact = [term: string, value: ReactNode, width?: "wide"];

/** A definition list of facts, in as many columns as fit: one on a phone. */
export function Facts({ items }: { items: Fact[] }) {
  return (
    <dl className="facts">
      {items.map(([term, value, width]) => (
        <div key={term} className={width === "wide" ? "wide" : undefined}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Mono({
  children,
  title,
  "data-testid": testId,
}: {
  children: ReactNode;
  title?: string;
  "data-testid"?: string;
}) {
  return (
    <code className="mono" title={title} data-testid={testId}>
      {children}
    </code>
  );
}
