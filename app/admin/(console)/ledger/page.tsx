import { refresh } from "next/cache";
import { formatMoney } from "@/app/money";
import { adminCaller } from "@/server/http/admin-session";
import { utc } from "../../_components/format";
import { LedgerTransactionTable } from "../../_components/ledger-transaction";
import { LiveRefresh } from "../../_components/live-refresh";
import { ReconcileForm, type RunState } from "../../_components/reconcile-form";
import { Facts, Mono } from "../../_components/ui";

export const dynamic = "force-dynamic";

// A report can list thousands of mismatches; a page that long helps nobody.
const SHOWN_MISMATCHES = 50;

const MISMATCH_LABELS: Record<string, string> = {
  charge_without_postings: "Charge without postings",
  postings_without_charge: "Postings without charge",
  amount_mismatch: "Amount mismatch",
  currency_mismatch: "Currency mismatch",
  declined_with_postings: "Declined, yet booked",
  duplicate_charge: "Duplicate charge",
  succeeded_without_receipt: "Succeeded, no receipt",
  stale_pending_payment: "Pending for too long",
  refund_without_postings: "Refund without postings",
  postings_without_refund: "Postings without refund",
  refund_amount_mismatch: "Refund amount mismatch",
  refund_beyond_charge: "Refunded beyond the charge",
  capture_without_postings: "Captured at the provider, authorized here",
  hold_released_at_provider: "Released at the provider, held here",
  hold_amount_mismatch: "Hold amount mismatch",
  captured_amount_mismatch: "Captured amount mismatch",
  captured_after_cancel: "Canceled here, captured at the provider",
  hold_open_at_provider: "Canceled here, held at the provider",
};

async function runReconciliation(_previous: RunState, _form: FormData): Promise<RunState> {
  "use server";
  const admin = await adminCaller();
  try {
    await admin.reconcile.run();
  } catch (error) {
    return { error: `The reconciler failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  refresh();
  return { error: null };
}

export default async function AdminLedgerPage() {
  const admin = await adminCaller();
  const [check, balances, transactions, report] = await Promise.all([
    admin.ledger.verify(),
    admin.ledger.balances(),
    admin.ledger.transactions({ limit: 20 }),
    admin.reconcile.latest(),
  ]);
  return (
    <>
      <header className="page-head">
        <h1>Ledger</h1>
        <LiveRefresh seconds={5} />
      </header>

      <section
        className={`card check ${check.balanced ? "check-ok" : "check-bad"}`}
        aria-labelledby="check-heading"
      >
        <h2 id="check-heading">{check.balanced ? "The books balance" : "The books do not balance"}</h2>
        <p>
          {check.entries} entries in {check.transactions} transactions.{" "}
          {check.totals.length === 0
            ? "Nothing booked yet."
            : check.totals.map((t) => `${t.currency} sum: ${t.sumMinor}`).join(" · ")}
        </p>
        {check.unbalancedTransactions.length > 0 && (
          <ul role="alert">
            {check.unbalancedTransactions.map((u) => (
              <li key={u.transactionId}>
                Transaction <Mono>{u.transactionId}</Mono> sums to {u.sumMinor}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="card" aria-labelledby="reconcile-heading">
        <div className="section-head">
          <h2 id="reconcile-heading">Reconciliation with the provider</h2>
          <ReconcileForm run={runReconciliation} />
        </div>
        {report ? (
          <>
            {report.providerError && (
              <p role="alert" className="error">
                The provider was unreachable: this report checks our side only ({report.providerError}).
              </p>
            )}
            <Facts
              items={[
                [
                  "Report",
                  <Mono key="r" data-testid="report-id">
                    {report.id.slice(0, 8)}
                  </Mono>,
                ],
                ["Started", utc(report.startedAt)],
                ["Window from", utc(report.windowStart)],
                ["Charges checked", report.chargesChecked],
                ["Payments checked", report.paymentsChecked],
                [
                  "Mismatches",
                  <strong key="m" className={report.mismatches.length === 0 ? "success" : "error"}>
                    {report.mismatches.length}
                  </strong>,
                ],
              ]}
            />
            {report.mismatches.length > 0 && (
              <div className="table-scroll">
                <table className="responsive">
                  <caption className="visually-hidden">Mismatches</caption>
                  <thead>
                    <tr>
                      <th scope="col">Kind</th>
                      <th scope="col">Payment</th>
                      <th scope="col">Charge</th>
                      <th scope="col">Detail</th>
                    </tr>
                  </thead>
                  <tbody>
                    {report.mismatches.slice(0, SHOWN_MISMATCHES).map((m) => (
                      <tr key={`${m.kind}:${m.paymentId}:${m.chargeId}`}>
                        <td data-label="Kind">{MISMATCH_LABELS[m.kind] ?? m.kind}</td>
                        <td data-label="Payment">{m.paymentId ? <Mono>{m.paymentId}</Mono> : "—"}</td>
                        <td data-label="Charge">
                          {m.chargeId ? <Mono>{m.chargeId}</Mono> : "—"}
                          {m.bookedChargeId && (
                            <>
                              {" "}
                              (booked: <Mono>{m.bookedChargeId}</Mono>)
                            </>
                          )}
                        </td>
                        <td data-label="Detail">{m.detail}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {report.mismatches.length > SHOWN_MISMATCHES && (
                  <p className="muted">
                    The first {SHOWN_MISMATCHES} of {report.mismatches.length} are shown; all are in the
                    report (admin.reconcile.latest).
                  </p>
                )}
              </div>
            )}
          </>
        ) : (
          <p className="muted">The reconciler has not run yet.</p>
        )}
      </section>

      <section className="card" aria-labelledby="balances-heading">
        <h2 id="balances-heading">Account balances</h2>
        <div className="table-scroll">
          {/* Cards on phones: balances grow long enough to push a three-column table off screen. */}
          <table className="responsive">
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Normal side</th>
                <th scope="col" className="num">
                  Balance
                </th>
              </tr>
            </thead>
            <tbody>
              {balances.map((b) => (
                <tr key={`${b.code}-${b.currency}`}>
                  <td data-label="Account">
                    {b.name} <span className="muted">({b.code})</span>
                  </td>
                  <td data-label="Normal side">{b.normalSide}</td>
                  <td data-label="Balance" className="num">
                    {formatMoney(b.balanceMinor, b.currency)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <section className="card" aria-labelledby="transactions-heading">
        <h2 id="transactions-heading">Recent transactions</h2>
        {transactions.length === 0 ? (
          <p className="muted">No ledger transactions yet.</p>
        ) : (
          transactions.map((t) => <LedgerTransactionTable key={t.id} transaction={t} />)
        )}
      </section>
    </>
  );
}
