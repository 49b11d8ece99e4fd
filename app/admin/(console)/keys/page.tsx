import { getTRPCErrorFromUnknown } from "@trpc/server";
import Link from "next/link";
import { redirect } from "next/navigation";
import { KEY_STATES, type TKeyState } from "@/server/admin/schemas";
import { adminCaller } from "@/server/http/admin-session";
import { STATE_LABELS } from "../../_components/format";
import { LiveRefresh } from "../../_components/live-refresh";
import { Mono, StateBadge, Time } from "../../_components/ui";

export const dynamic = "force-dynamic";

interface KeySearch {
  state?: string;
  account?: string;
  q?: string;
  cursor?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The listing's filters from the URL, so that a filtered view can be bookmarked and shared. */
function filtersOf(search: KeySearch) {
  const state = KEY_STATES.find((s) => s === search.state);
  const account = search.account?.trim() || undefined;
  const q = search.q?.trim() || undefined;
  return {
    state,
    account,
    q,
    input: {
      ...(state ? { state } : {}),
      ...(account ? (UUID.test(account) ? { accountId: account } : { accountHandle: account }) : {}),
      ...(q ? { search: q } : {}),
      ...(search.cursor ? { cursor: search.cursor } : {}),
      limit: 25,
    },
  };
}

function hrefWith(filters: { state?: TKeyState; account?: string; q?: string }, cursor?: string) {
  const params = new URLSearchParams();
  if (filters.state) params.set("state", filters.state);
  if (filters.account) params.set("account", filters.account);
  if (filters.q) params.set("q", filters.q);
  if (cursor) params.set("cursor", cursor);
  const query = params.toString();
  return query ? `/admin/keys?${query}` : "/admin/keys";
}

export default async function AdminKeysPage({ searchParams }: { searchParams: Promise<KeySearch> }) {
  const search = await searchParams;
  const admin = await adminCaller();
  const filters = filtersOf(search);
  const page = await admin.keys.list(filters.input).catch((error: unknown) => {
    // A stale or hand-edited cursor: start again from the newest key.
    if (search.cursor && getTRPCErrorFromUnknown(error).code === "BAD_REQUEST") redirect(hrefWith(filters));
    throw error;
  });
  const now = Date.now();
  const filtered = Boolean(filters.state || filters.account || filters.q);
  return (
    <>
      <header className="page-head">
        <h1>Idempotency keys</h1>
        <LiveRefresh seconds={3} />
      </header>

      <search aria-label="Filter keys">
        <form className="card filters" method="get" action="/admin/keys">
          <div>
            <label htmlFor="state">State</label>
            <select id="state" name="state" defaultValue={filters.state ?? ""}>
              <option value="">Any</option>
              {KEY_STATES.map((s) => (
                <option key={s} value={s}>
                  {STATE_LABELS[s]}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="account">Account</label>
            <input id="account" name="account" defaultValue={filters.account} placeholder="handle or id" />
          </div>
          <div className="grow">
            <label htmlFor="q">Key</label>
            <input id="q" name="q" type="search" defaultValue={filters.q} placeholder="part of the key" />
          </div>
          <div className="filter-actions">
            <button type="submit">Filter</button>
            {filtered && <Link href="/admin/keys">Clear</Link>}
          </div>
        </form>
      </search>

      {page.items.length === 0 ? (
        <p className="card muted">
          {filtered ? "No key matches these filters." : "No idempotency keys yet."}
        </p>
      ) : (
        <div className="table-scroll">
          <table className="keys responsive">
            <caption className="visually-hidden">Idempotency keys, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Account</th>
                <th scope="col">Procedure</th>
                <th scope="col">State</th>
                <th scope="col">Recovery point</th>
                <th scope="col">Response</th>
                <th scope="col" className="num">
                  Attempts
                </th>
                <th scope="col">Lease</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((k) => (
                <tr key={k.id}>
                  <th scope="row" data-label="Key">
                    <Link href={`/admin/keys/${k.id}`} className="key-link" title={k.key}>
                      <Mono>{k.key}</Mono>
                    </Link>
                  </th>
                  <td data-label="Account">{k.accountHandle}</td>
                  <td data-label="Procedure">
                    <Mono>{k.procedure}</Mono>
                  </td>
                  <td data-label="State">
                    <StateBadge state={k.state} />
                  </td>
                  <td data-label="Recovery point">{k.recoveryPoint}</td>
                  <td data-label="Response">{k.responseStatus ?? <span className="muted">—</span>}</td>
                  <td data-label="Attempts" className="num">
                    {k.attempts}
                  </td>
                  <td data-label="Lease">
                    <Time iso={k.lockedUntil} now={now} />
                  </td>
                  <td data-label="Created">
                    <Time iso={k.createdAt} now={now} />
                  </td>
                  <td data-label="Expires">
                    <Time iso={k.expiresAt} now={now} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <nav className="pager" aria-label="Pages">
        {search.cursor && <Link href={hrefWith(filters)}>← Newest</Link>}
        {page.nextCursor && <Link href={hrefWith(filters, page.nextCursor)}>Older →</Link>}
      </nav>
    </>
  );
}
