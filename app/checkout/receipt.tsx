"use client";

import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import { useTRPC } from "@/app/_trpc/client";
import { formatMoney } from "@/app/money";
import type { AppRouter } from "@/server/root";
import { longDate } from "./long-date";

const GIVE_UP_AFTER_MS = 60_000;

/**
 * The receipt arrives a moment after the payment, through the outbox and the receipts
 * service: poll the order until it is there.
 */
export function ReceiptStatus({ orderId }: { orderId: string }) {
  const trpc = useTRPC();
  const [since] = useState(() => Date.now());
  const { data } = useQuery(
    trpc.orders.get.queryOptions(
      { orderId },
      {
        refetchInterval: (q) =>
          q.state.data?.receipt || Date.now() - since > GIVE_UP_AFTER_MS ? false : 1000,
      },
    ),
  );
  const receipt = data?.receipt;
  if (!receipt) {
    return (
      <p className="muted" role="status" data-testid="receipt-pending">
        Issuing your receipt…
      </p>
    );
  }
  return (
    <>
      <ReceiptTable receipt={receipt} />
      {data.refunds.length > 0 && <Refunds refunds={data.refunds} refundedMinor={data.refundedMinor} />}
    </>
  );
}

type TOrder = inferRouterOutputs<AppRouter>["orders"]["get"];

function ReceiptTable({ receipt }: { receipt: NonNullable<TOrder["receipt"]> }) {
  return (
    <section aria-labelledby="receipt-heading" className="receipt" data-testid="receipt">
      <h4 id="receipt-heading">
        Receipt <span data-testid="receipt-number">{receipt.number}</span>
      </h4>
      <p className="small muted">
        Paid and issued{" "}
        <time dateTime={receipt.issuedAt} data-testid="receipt-date">
          {longDate(receipt.issuedAt)}
        </time>
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Qty</th>
            <th scope="col">Amount</th>
          </tr>
        </thead>
        <tbody>
          {receipt.lines.map((line) => (
            <tr key={line.sku}>
              <td>{line.name}</td>
              <td>{line.quantity}</td>
              <td>{formatMoney(line.lineTotal, receipt.currency)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={2}>
              Total
            </th>
            <td>{formatMoney(receipt.total, receipt.currency)}</td>
          </tr>
        </tfoot>
      </table>
    </section>
  );
}

/** Money given back on this order: each refund, its state and, once issued, its refund receipt. */
function Refunds({ refunds, refundedMinor }: { refunds: TOrder["refunds"]; refundedMinor: number }) {
  const currency = refunds[0]?.currency ?? "EUR";
  return (
    <section aria-labelledby="refunds-heading" className="receipt" data-testid="refunds">
      <h4 id="refunds-heading">
        Refunds · <span data-testid="refunded-total">{formatMoney(refundedMinor, currency)}</span> refunded
      </h4>
      <table>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Reason</th>
            <th scope="col">Status</th>
            <th scope="col">Amount</th>
          </tr>
        </thead>
        <tbody>
          {refunds.map((r) => (
            <tr key={r.id} data-testid="shopper-refund">
              <td>{r.createdAt.slice(0, 10)}</td>
              <td>
                {r.reason}
                {r.receiptNumber && <span className="muted"> · receipt {r.receiptNumber}</span>}
              </td>
              <td>
                {r.status === "succeeded" ? "refunded" : r.status === "pending" ? "in progress" : r.status}
              </td>
              <td>{formatMoney(r.amountMinor, r.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
