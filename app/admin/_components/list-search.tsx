import Link from "next/link";
import type { ReactNode } from "react";

/** A list's search from the URL (bookmarkable): `q` is an id, an email or a handle. */
export interface ListSearchParams {
  q?: string;
  status?: string;
  amount?: string;
  from?: string;
  to?: string;
  cursor?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The procedure's input from the URL; dates are whole UTC days, `to` included. */
export function listInput(p: ListSearchParams) {
  const amount = p.amount && /^\d{1,10}$/.test(p.amount) ? Number(p.amount) : undefined;
  const to =
    p.to && DATE.test(p.to)
      ? new Date(Date.parse(`${p.to}T00:00:00Z`) + 86_400_000).toISOString()
      : undefined;
  return {
    ...(p.q?.trim() ? { q: p.q.trim() } : {}),
    ...(p.status ? { status: p.status } : {}),
    ...(amount !== undefined ? { amountMinor: amount } : {}),
    ...(p.from && DATE.test(p.from) ? { from: `${p.from}T00:00:00Z` } : {}),
    ...(to ? { to } : {}),
    ...(p.cursor ? { cursor: p.cursor } : {}),
    limit: 25,
  };
}

export function nextHref(path: string, p: ListSearchParams, cursor: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...p, cursor })) if (v) params.set(k, v);
  return `${path}?${params}`;
}

/** The search form of a list: a GET form, so it works without JavaScript. */
export function ListSearch({
  path,
  params,
  statuses,
  label,
}: {
  path: string;
  params: ListSearchParams;
  statuses: readonly string[];
  label: string;
}) {
  return (
    <form method="get" action={path} className="list-search" aria-label={`Search ${label}`}>
      <label>
        Id, email or handle
        <input name="q" defaultValue={params.q ?? ""} maxLength={254} />
      </label>
      <label>
        Status
        <select name="status" defaultValue={params.status ?? ""}>
          <option value="">any</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Amount (minor units)
        <input name="amount" inputMode="numeric" pattern="\d*" defaultValue={params.amount ?? ""} />
      </label>
      <label>
        From (UTC)
        <input type="date" name="from" defaultValue={params.from ?? ""} />
      </label>
      <label>
        To (UTC)
        <input type="date" name="to" defaultValue={params.to ?? ""} />
      </label>
      <button type="submit">Search</button>
      <Link href={path}>Clear</Link>
    </form>
  );
}

export function ListPager({ next }: { next: string | null }): ReactNode {
  return next ? (
    <p>
      <Link href={next} rel="next">
        Older →
      </Link>
    </p>
  ) : null;
}
