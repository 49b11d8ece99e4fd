import Link from "next/link";
import { paymentMethodLabel } from "@/app/_checkout/payment-methods";
import { formatMoney } from "@/app/money";
import { longDate } from "./long-date";
import { ReceiptStatus } from "./receipt";

export interface PaidPayment {
  id: string;
  orderId: string;
  amount: number;
  currency: string;
  status: string;
  captureMethod?: "automatic" | "manual";
  amountCaptured?: number;
  captureBefore?: string | null;
}

/** The receipt: what a shopper (and a support agent) needs to find this payment again. */
export function PaymentResult({
  ref,
  payment,
  paymentMethod,
}: {
  ref?: React.Ref<HTMLDivElement>;
  payment: PaidPayment;
  paymentMethod?: string | undefined;
}) {
  const authorized = payment.status === "authorized";
  return (
    <div ref={ref} tabIndex={-1} className="result">
      <h3 id="result-heading">{authorized ? "Authorized — charged when it ships" : "Payment complete"}</h3>
      <dl className="facts">
        <dt>Payment ID</dt>
        <dd>
          <code data-testid="payment-id">{payment.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span className="pill pill-ok" data-testid="payment-status">
            {payment.status}
          </span>
        </dd>
        <Amounts payment={payment} />
        {paymentMethod && (
          <>
            <dt>Paid with</dt>
            <dd>{paymentMethodLabel(paymentMethod)}</dd>
          </>
        )}
      </dl>
      {authorized ? (
        <p className="muted">Your bank holds the amount; nothing is taken until your order ships.</p>
      ) : (
        <ReceiptStatus orderId={payment.orderId} />
      )}
      <section aria-labelledby="next-heading" className="next-steps">
        <h4 id="next-heading">What happens next</h4>
        <ul>
          {authorized ? (
            <>
              <li>
                We prepare your order; when it ships, the amount held is charged and your receipt is issued.
              </li>
              <li>If it cannot ship in time, the hold is released and nothing is charged.</li>
            </>
          ) : (
            <>
              <li>We prepare your order and ship it; you were charged once, whatever retries happened.</li>
              <li>Any refund shows on this page and in your receipt history.</li>
            </>
          )}
          <li>
            This order stays in <Link href="/account#orders">your orders</Link>, with its status and receipt.
          </li>
        </ul>
      </section>
      <p>
        <Link href="/">Continue shopping</Link>
      </p>
    </div>
  );
}

/** What was held, taken and given back: a capture may take less than the hold and release the rest. */
function Amounts({ payment }: { payment: PaidPayment }) {
  const money = (minor: number) => formatMoney(minor, payment.currency);
  if (payment.status === "authorized") {
    return (
      <>
        <dt>Amount held</dt>
        <dd data-testid="payment-held">{money(payment.amount)}</dd>
        {payment.captureBefore && (
          <>
            <dt>Charged by</dt>
            <dd data-testid="capture-before">
              <time dateTime={payment.captureBefore}>{longDate(payment.captureBefore)}</time>, or the hold is
              released
            </dd>
          </>
        )}
      </>
    );
  }
  const captured = payment.amountCaptured ?? payment.amount;
  const released = payment.captureMethod === "manual" ? payment.amount - captured : 0;
  return (
    <>
      <dt>Amount charged</dt>
      <dd data-testid="payment-amount">{money(captured)}</dd>
      {released > 0 && (
        <>
          <dt>Released</dt>
          <dd data-testid="payment-released">
            {money(released)} of the {money(payment.amount)} held was released, never charged
          </dd>
        </>
      )}
    </>
  );
}
