import Link from "next/link";
import { paymentMethodLabel } from "@/app/_checkout/payment-methods";
import { formatMoney } from "@/app/money";
import { ReceiptStatus } from "./receipt";

interface PaidPayment {
  id: string;
  orderId: string;
  amount: number;
  currency: string;
  status: string;
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
  return (
    <div ref={ref} tabIndex={-1} className="result">
      <h3 id="result-heading">Payment complete</h3>
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
        <dt>Amount charged</dt>
        <dd data-testid="payment-amount">{formatMoney(payment.amount, payment.currency)}</dd>
        {paymentMethod && (
          <>
            <dt>Paid with</dt>
            <dd>{paymentMethodLabel(paymentMethod)}</dd>
          </>
        )}
      </dl>
      <ReceiptStatus orderId={payment.orderId} />
      <p>
        <Link href="/">Continue shopping</Link>
      </p>
    </div>
  );
}
