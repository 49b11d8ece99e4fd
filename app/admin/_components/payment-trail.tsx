import Link from "next/link";
import { formatMoney } from "@/app/money";
import type { TChargeLookup, TPaymentTrail } from "@/server/admin/schemas";
import { utc } from "./format";
import { LedgerTransactionTable } from "./ledger-transaction";
import { type Fact, Facts, Mono } from "./ui";

function ChargeFacts({ lookup }: { lookup: TChargeLookup }) {
  switch (lookup.state) {
    case "not_charged":
      return <p className="muted">No provider charge recorded yet.</p>;
    case "missing":
      return (
        <p className="error" role="alert">
          The provider has no charge <Mono>{lookup.chargeId}</Mono>.
        </p>
      );
    case "unavailable":
      return (
        <p className="error">
          Could not ask the provider about <Mono>{lookup.chargeId}</Mono>: {lookup.message}
        </p>
      );
    case "found": {
      const c = lookup.charge;
      return (
        <Facts
          items={[
            ["Charge", <Mono key="id">{c.id}</Mono>],
            [
              "Status",
              <span key="s" className={c.status === "succeeded" ? "success" : "error"}>
                {c.status}
              </span>,
            ],
            ["Amount", formatMoney(c.amount, c.currency.toUpperCase())],
            ["Method", c.paymentMethod],
            ["Created", utc(c.createdAt)],
            ...(c.failureMessage ? [["Failure", c.failureMessage] satisfies Fact] : []),
          ]}
        />
      );
    }
  }
}

/** A payment, what the provider says about its charge, and what the ledger booked for it. */
export function PaymentTrail({
  payment: p,
  showOrderLink = true,
}: {
  payment: TPaymentTrail;
  showOrderLink?: boolean;
}) {
  const count = p.ledgerTransactions.length;
  return (
    <div className="trail">
      <Facts
        items={[
          ["Payment", <Mono key="id">{p.id}</Mono>],
          [
            "Status",
            <span key="s" className={`status status-${p.status}`}>
              {p.status}
            </span>,
          ],
          ["Amount", formatMoney(p.amountMinor, p.currency)],
          ["Method", p.paymentMethod],
          [
            "Order",
            showOrderLink ? (
              <Link key="o" href={`/admin/orders/${p.orderId}`}>
                <Mono>{p.orderId}</Mono>
              </Link>
            ) : (
              <Mono key="o">{p.orderId}</Mono>
            ),
          ],
          [
            "Key",
            p.idempotencyKeyId ? (
              <Link key="k" href={`/admin/keys/${p.idempotencyKeyId}`}>
                #{p.idempotencyKeyId}
              </Link>
            ) : (
              <span key="k" className="muted">
                swept
              </span>
            ),
          ],
          ["Created", utc(p.createdAt)],
          ...(p.failureMessage ? [["Failure", p.failureMessage] satisfies Fact] : []),
        ]}
      />
      <h3>Provider charge</h3>
      <ChargeFacts lookup={p.charge} />
      <h3>
        Ledger: {count} transaction{count === 1 ? "" : "s"}
      </h3>
      {count === 0 ? (
        <p className="muted">Nothing booked for this payment.</p>
      ) : (
        p.ledgerTransactions.map((t) => <LedgerTransactionTable key={t.id} transaction={t} />)
      )}
    </div>
  );
}
