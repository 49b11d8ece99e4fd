"use client";

import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import type { PayState } from "@/app/_checkout/payer";
import { DEFAULT_PAYMENT_METHOD, PAYMENT_METHODS } from "@/app/_checkout/payment-methods";
import { usePayer, usePayState } from "@/app/_checkout/use-payer";
import { formatMoney } from "@/app/money";
import type { AppRouter } from "@/server/root";
import { BankStep, bankStepAnnouncement } from "./bank-step";
import { PaymentResult } from "./payment-result";

export type TCheckoutOrder = inferRouterOutputs<AppRouter>["orders"]["get"];

export function CheckoutView({ order }: { order: TCheckoutOrder }) {
  const payer = usePayer();
  const state = usePayState(payer, order.id);
  const [hydrated, setHydrated] = useState(false);
  const [method, setMethod] = useState<string>(DEFAULT_PAYMENT_METHOD);
  const outcomeRef = useRef<HTMLDivElement>(null);
  // A press of Pay in this page goes to the bank's step at once; an intent found again waits for a click.
  const pressedHere = useRef(false);

  // An intent left unfinished (a reload mid-payment, a closed tab) goes on with its own key.
  useEffect(() => {
    payer.resume(order.id);
    setHydrated(true);
  }, [payer, order.id]);

  useEffect(() => {
    if (state.phase !== "idle") setMethod(state.intent.request.paymentMethod);
    if (state.phase === "done" && !(state.outcome.kind === "requires_action" && pressedHere.current))
      outcomeRef.current?.focus();
  }, [state]);

  const paying = state.phase === "running";
  const outcome = state.phase === "done" ? state.outcome : null;
  // Before this tab pays, the order as the server last saw it decides what to show.
  const saved = state.phase === "idle" ? order.payment : null;
  const total = formatMoney(order.total, order.currency);
  const goToBank = outcome?.kind === "requires_action" && pressedHere.current;

  let panel: React.ReactNode = null;
  // Paid (or authorized): the page becomes the order's confirmation.
  let paidAs: string | null = null;
  if (outcome?.kind === "succeeded" || saved?.status === "succeeded" || saved?.status === "authorized") {
    const payment = outcome?.kind === "succeeded" ? outcome.payment : saved;
    const paymentMethod = state.phase === "done" ? state.intent.request.paymentMethod : saved?.paymentMethod;
    if (payment) {
      paidAs = payment.status;
      panel = <PaymentResult ref={outcomeRef} payment={payment} paymentMethod={paymentMethod} />;
    }
  } else if (outcome?.kind === "requires_action") {
    panel = <BankStep ref={outcomeRef} url={outcome.url} go={goToBank} paymentId={outcome.payment.id} />;
  } else if (!hydrated && (saved?.status === "pending" || saved?.status === "requires_action")) {
    // Until the saved intent is read, a pending payment may well be this browser's own.
    panel = <p className="muted">Checking this order's payment…</p>;
  } else if (outcome?.kind === "already_paid") {
    panel = (
      <Notice ref={outcomeRef} tone="info" title="This order is already paid">
        <p>
          {outcome.paymentStatus === "pending"
            ? "Another payment for this order is still being confirmed, so this one was stopped before any charge."
            : "Another payment already paid it, so nothing more was charged."}
          <PaymentRef id={outcome.paymentId} />
        </p>
        <OrderLinks orderId={order.id} />
      </Notice>
    );
  } else if (saved?.status === "requires_action" && saved.nextAction) {
    // Started in another browser (this one has no intent for it): the step is still the way on.
    panel = <BankStep url={saved.nextAction.url} go={false} paymentId={saved.id} />;
  } else if (saved?.status === "pending") {
    panel = (
      <Notice tone="info" title="A payment for this order is in progress">
        <p>
          It was started elsewhere and is still being confirmed.
          <PaymentRef id={saved.id} />
        </p>
        <OrderLinks orderId={order.id} />
      </Notice>
    );
  } else if (outcome?.kind === "unconfirmed") {
    // The outcome is unknown, so the only safe way on is the same intent: no Pay button here.
    panel = (
      <Notice ref={outcomeRef} tone="error" title="We could not confirm your payment yet">
        <p>{outcome.message}</p>
        <button type="button" onClick={() => payer.resume(order.id)}>
          Check again
        </button>
      </Notice>
    );
  } else if (outcome?.kind === "signed_out") {
    panel = (
      <Notice ref={outcomeRef} tone="error" title={outcome.message}>
        <p>
          <Link href="/signin">Sign in</Link>, then come back through Checkout: your payment goes on where it
          stopped, and is charged at most once.
        </p>
      </Notice>
    );
  }

  let problem: React.ReactNode = null;
  if (outcome?.kind === "declined") {
    problem = (
      <Notice ref={outcomeRef} tone="error" title={outcome.message}>
        <p>Nothing was charged. Choose another payment method and press Pay to try again.</p>
      </Notice>
    );
  } else if (outcome?.kind === "rejected") {
    problem = (
      <Notice ref={outcomeRef} tone="error" title="This payment could not be processed">
        <p>{outcome.message}</p>
      </Notice>
    );
  } else if (saved?.status === "canceled") {
    problem = (
      <Notice tone="info" title="Your last payment was canceled">
        <p>The hold on your card was released and nothing was charged. Press Pay to pay again.</p>
      </Notice>
    );
  } else if (saved?.status === "declined" || saved?.status === "failed") {
    // Both are proven: the provider declined, or refused for good, or no request ever left.
    problem = (
      <Notice tone="error" title={saved.failureMessage ?? "Your last payment attempt did not go through."}>
        <p>Nothing was charged. Choose a payment method and press Pay to try again.</p>
      </Notice>
    );
  }

  return (
    <>
      <h1>{paidAs === "authorized" ? "Order placed" : paidAs ? "Paid" : "Checkout"}</h1>
      <div className="checkout">
        <section aria-labelledby="summary-heading" className="card">
          <h2 id="summary-heading">Order summary</h2>
          <table className="line-items">
            <thead>
              <tr>
                <th scope="col">Item</th>
                <th scope="col" className="num">
                  Qty
                </th>
                <th scope="col" className="num">
                  Price
                </th>
              </tr>
            </thead>
            <tbody>
              {order.items.map((item) => (
                <tr key={item.sku}>
                  <td>
                    {item.name}
                    <span className="unit-price">{formatMoney(item.unitPrice, order.currency)} each</span>
                  </td>
                  <td className="num">{item.quantity}</td>
                  <td className="num">{formatMoney(item.lineTotal, order.currency)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row" colSpan={2}>
                  Total
                </th>
                <td className="num" data-testid="order-total">
                  {total}
                </td>
              </tr>
            </tfoot>
          </table>
          <p className="muted small">
            Order <code>{order.id}</code>
          </p>
        </section>

        <section aria-labelledby="payment-heading" className="card">
          <h2 id="payment-heading">Payment</h2>
          {panel ?? (
            <form
              onSubmit={(event) => {
                event.preventDefault();
                // The server is the real guard; in flight, this joins the running intent (same key).
                pressedHere.current = true;
                void payer.pay(order.id, method, `${window.location.origin}/checkout?order=${order.id}`);
              }}
            >
              <fieldset className="methods">
                <legend>Payment method</legend>
                {PAYMENT_METHODS.map((m) => (
                  <label key={m.id} className="method">
                    <input
                      type="radio"
                      name="paymentMethod"
                      value={m.id}
                      checked={method === m.id}
                      disabled={paying}
                      onChange={() => setMethod(m.id)}
                      aria-describedby={`${m.id}-hint`}
                    />
                    <span>
                      <span className="method-label">{m.label}</span>
                      <span id={`${m.id}-hint`} className="muted small method-hint">
                        {m.hint} <code>{m.id}</code>
                      </span>
                    </span>
                  </label>
                ))}
              </fieldset>
              {problem}
              <button
                type="submit"
                className="pay"
                disabled={!hydrated || paying}
                aria-describedby="pay-progress"
              >
                {paying ? "Paying…" : `Pay ${total}`}
              </button>
            </form>
          )}
          <p id="pay-progress" role="status" aria-live="polite" className="progress">
            {paying && <span className="spinner" aria-hidden="true" />}
            {outcome?.kind === "requires_action" ? bankStepAnnouncement(goToBank) : progressText(state)}
          </p>
        </section>
      </div>
    </>
  );
}

function progressText(state: PayState): string {
  if (state.phase !== "running") return "";
  const { progress, resumed } = state;
  if (!progress.retry && progress.attempt === 1 && !resumed) return "Processing your payment…";
  const detail = {
    network: " The connection was interrupted; trying again.",
    server: " The payment service did not answer; trying again.",
    in_flight: " Your payment is still being processed.",
  };
  return `Confirming your payment…${progress.retry ? detail[progress.retry.reason] : ""}`;
}

function PaymentRef({ id }: { id: string | null }) {
  if (!id) return null;
  return (
    <>
      {" "}
      Payment <code data-testid="existing-payment-id">{id}</code>.
    </>
  );
}

function OrderLinks({ orderId }: { orderId: string }) {
  return (
    <p>
      <a href={`/checkout?order=${orderId}`}>Refresh this order</a> · <Link href="/">Continue shopping</Link>
    </p>
  );
}

function Notice({
  ref,
  tone,
  title,
  children,
}: {
  ref?: React.Ref<HTMLDivElement>;
  tone: "info" | "error";
  title: string;
  children: React.ReactNode;
}) {
  return (
    <div ref={ref} tabIndex={-1} role="alert" className={`notice notice-${tone}`}>
      <h3>{title}</h3>
      {children}
    </div>
  );
}
