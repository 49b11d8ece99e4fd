import { formatMoney } from "@/app/money";
import type { TPaymentTrail } from "@/server/admin/schemas";
import { utc } from "./format";
import { RefundForm } from "./refund-form";
import { Facts, Mono } from "./ui";

/** What a payment captured and gave back, its refunds, and (while some is left) the Refund form. */
export function PaymentRefunds({
  payment: p,
  canRefund = true,
}: {
  payment: TPaymentTrail;
  canRefund?: boolean;
}) {
  if (p.status !== "succeeded" && p.refunds.length === 0) return null;
  return (
    <section className="refunds" aria-label={`Refunds of payment ${p.id}`}>
      <h3>Refunds</h3>
      <Facts
        items={[
          ["Captured", formatMoney(p.amountMinor, p.currency)],
          [
            "Refunded",
            <span key="r" data-testid="refunded-amount">
              {formatMoney(p.refundedMinor, p.currency)}
            </span>,
          ],
          [
            "Left to refund",
            <span key="l" data-testid="refundable-amount">
              {formatMoney(p.refundableMinor, p.currency)}
            </span>,
          ],
        ]}
      />
      {p.refunds.length === 0 ? (
        <p className="muted">No refund yet.</p>
      ) : (
        <div className="table-scroll">
          <table className="refund-list">
            <caption className="visually-hidden">Refunds of payment {p.id}</caption>
            <thead>
              <tr>
                <th scope="col">Refund</th>
                <th scope="col" className="num">
                  Amount
                </th>
                <th scope="col">Reason</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {p.refunds.map((r) => (
                <tr key={r.id} data-testid="refund-row">
                  <td data-label="Refund">
                    <Mono>{r.id}</Mono>
                  </td>
                  <td data-label="Amount" className="num">
                    {formatMoney(r.amountMinor, r.currency)}
                  </td>
                  <td data-label="Reason">{r.reason}</td>
                  <td data-label="Status">
                    <span className={`status status-${r.status}`}>{r.status}</span>
                  </td>
                  <td data-label="Created">{utc(r.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {p.status === "succeeded" && !canRefund && (
        <p className="muted">Viewers read only: an operator or an owner refunds.</p>
      )}
      {p.status === "succeeded" && canRefund && (
        <RefundForm paymentId={p.id} currency={p.currency} refundableMinor={p.refundableMinor} />
      )}
    </section>
  );
}
