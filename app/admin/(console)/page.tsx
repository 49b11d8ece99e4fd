import Link from "next/link";
import { KEY_STATES } from "@/server/admin/schemas";
import { adminCaller } from "@/server/http/admin-session";
import { STATE_LABELS, utc } from "../_components/format";
import { LiveRefresh } from "../_components/live-refresh";
import { OutcomeChart } from "../_components/outcome-chart";

export const dynamic = "force-dynamic";

export default async function AdminOverviewPage() {
  const admin = await adminCaller();
  const [chart, counts, ledger, reconciliation, outbox, webhooks] = await Promise.all([
    admin.outcomes.chart(),
    admin.keys.counts(),
    admin.ledger.verify(),
    admin.reconcile.latest(),
    admin.outbox.stats(),
    admin.webhooks.overview(),
  ]);
  // Each idempotent operation (payments, refunds) charted apart, below their sum.
  const perProcedure = await Promise.all(
    chart.procedures.map((procedure) => admin.outcomes.chart({ procedure })),
  );
  return (
    <>
      <header className="page-head">
        <h1>Overview</h1>
        <LiveRefresh seconds={5} />
      </header>

      <section className="card" aria-labelledby="outcomes-heading">
        <h2 id="outcomes-heading">Outcomes in the last hour</h2>
        <OutcomeChart chart={chart} />
        {perProcedure.map((own) => (
          <section
            key={own.procedure}
            aria-label={`Outcomes of ${own.procedure}`}
            data-procedure={own.procedure}
          >
            <h3>{own.procedure}</h3>
            <OutcomeChart chart={own} />
          </section>
        ))}
      </section>

      <div className="tiles">
        <section className="card" aria-labelledby="keys-heading">
          <h2 id="keys-heading">Keys now</h2>
          <ul className="counts">
            {KEY_STATES.map((state) => (
              <li key={state}>
                <Link href={`/admin/keys?state=${state}`}>
                  <span className={`badge badge-${state}`}>{STATE_LABELS[state]}</span>
                  <strong>{counts[state]}</strong>
                </Link>
              </li>
            ))}
          </ul>
        </section>

        <section className="card" aria-labelledby="books-heading">
          <h2 id="books-heading">Books</h2>
          {ledger.balanced ? (
            <p className="success">
              Balanced: {ledger.entries} entries in {ledger.transactions} transactions sum to zero.
            </p>
          ) : (
            <p className="error" role="alert">
              Not balanced. <Link href="/admin/ledger">See the ledger</Link>.
            </p>
          )}
          <p>
            {reconciliation ? (
              <>
                Last reconciliation {utc(reconciliation.startedAt)}:{" "}
                <span className={reconciliation.mismatches.length === 0 ? "success" : "error"}>
                  {reconciliation.mismatches.length} mismatch
                  {reconciliation.mismatches.length === 1 ? "" : "es"}
                </span>
                .
              </>
            ) : (
              <span className="muted">The reconciler has not run yet.</span>
            )}{" "}
            <Link href="/admin/ledger">Ledger and reconciler</Link>
          </p>
        </section>

        <section className="card" aria-labelledby="outbox-heading">
          <h2 id="outbox-heading">Outbox and receipts</h2>
          <ul className="counts">
            <li>
              <span>Pending</span> <strong data-testid="outbox-pending">{outbox.pending}</strong>
            </li>
            <li>
              <span>Sent</span> <strong data-testid="outbox-sent">{outbox.sent}</strong>
            </li>
            <li>
              <span>Oldest pending</span>{" "}
              <strong>
                {outbox.oldestPendingAgeSeconds === null ? "—" : `${outbox.oldestPendingAgeSeconds} s`}
              </strong>
            </li>
            <li>
              <span>Failing</span>{" "}
              <strong className={outbox.failing > 0 ? "error" : undefined}>{outbox.failing}</strong>
            </li>
            <li>
              <span>Receipts consumer processed</span>{" "}
              <strong data-testid="consumer-processed">{outbox.processed}</strong>
            </li>
          </ul>
        </section>

        <section className="card tile-wide" aria-labelledby="webhooks-heading">
          <h2 id="webhooks-heading">Merchant webhooks</h2>
          <ul className="counts">
            <li>
              <span>Delivered</span> <strong>{webhooks.attempts.succeeded}</strong>
            </li>
            <li>
              <span>Failed attempts</span> <strong>{webhooks.attempts.failed}</strong>
            </li>
            <li>
              <span>Pending</span> <strong data-testid="webhooks-pending">{webhooks.pending}</strong>
            </li>
            <li>
              <span>Delivery lag</span> <strong>{Math.floor(webhooks.lagSeconds)} s</strong>
            </li>
            <li>
              <span>Disabled endpoints</span>{" "}
              <strong className={webhooks.disabledEndpoints > 0 ? "error" : undefined}>
                {webhooks.disabledEndpoints}
              </strong>
            </li>
          </ul>
          {webhooks.endpoints.length > 0 && (
            <table aria-label="Webhook endpoints behind, failing or disabled">
              <thead>
                <tr>
                  <th>Endpoint</th>
                  <th>Pending</th>
                  <th>Failed</th>
                  <th>Lag</th>
                  <th>State</th>
                </tr>
              </thead>
              <tbody>
                {webhooks.endpoints.map((e) => (
                  <tr key={e.endpointId}>
                    <td>
                      <code>{e.url}</code>
                    </td>
                    <td>{e.pending}</td>
                    <td>{e.failed}</td>
                    <td>{e.lagSeconds} s</td>
                    <td>{e.disabledReason ? `disabled: ${e.disabledReason}` : "enabled"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </>
  );
}
