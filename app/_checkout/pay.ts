/**
 * The payment's answers to the shared retry loop (app/_keyed/send.ts, over the client package's
 * core): what `payments.create` returns, and what each final refusal means to the shopper.
 */
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/root";
import { type Answers, type Progress, type SendDeps, sendWithRetries } from "../_keyed/send";
import type { FailedCall } from "../_keyed/trpc-attempt";
import type { TPaymentInput } from "./intent";

export type { TPaymentInput } from "./intent";

/** What `payments.create` answers (and replays). Amounts are integer minor units. */
export type TPayment = inferRouterOutputs<AppRouter>["payments"]["create"];

export type PaymentOutcome =
  /** Paid, or authorized (held, captured later): `payment.status` says which. */
  | { kind: "succeeded"; payment: TPayment }
  /**
   * The bank asks the shopper to confirm (3-D Secure) at `payment.nextAction.url`. Not final: the
   * intent is kept, and resuming it with the same key after the step gives the outcome.
   */
  | { kind: "requires_action"; payment: TPayment; url: string }
  /** The card (or the provider) refused: definitive for this intent; another card is a new intent. */
  | { kind: "declined"; paymentId: string | null; message: string }
  /** Another intent (another tab, another key) holds the order's payment. */
  | { kind: "already_paid"; paymentId: string | null; paymentStatus: string | null }
  /** The session ended before the key was used: signing in again and coming back resumes it. */
  | { kind: "signed_out"; message: string }
  /** Any other final answer: a request the server will never accept; retrying cannot help. */
  | { kind: "rejected"; httpStatus: number | null; message: string }
  /** Still no final answer at the deadline: the outcome is unknown, so only the same key may go on. */
  | { kind: "unconfirmed"; message: string };

export type PaymentProgress = Progress;
export type PayDeps = SendDeps<TPaymentInput, TPayment>;

const NOTHING_CHARGED = new Set([
  "card_declined",
  "provider_refused",
  "payment_abandoned",
  // The 3-D Secure step was not completed in time: the provider canceled the payment.
  "payment_canceled",
]);

export function paymentRefusal({ status, message, text }: FailedCall): PaymentOutcome {
  // A 409 without Retry-After: another key has paid the order.
  if (status === 409 && text("reason") === "order_already_paid") {
    return { kind: "already_paid", paymentId: text("paymentId"), paymentStatus: text("paymentStatus") };
  }
  // "Nothing was charged" is shown for these alone: the provider's decline or definite refusal,
  // or our durable record that no charge request ever left (an abandoned payment).
  if (status === 402 && NOTHING_CHARGED.has(text("reason") ?? "")) {
    return { kind: "declined", paymentId: text("paymentId"), message: message ?? "The payment was refused." };
  }
  if (status === 401) {
    return { kind: "signed_out", message: "You are signed out. Sign in again to finish paying." };
  }
  if (status === 422) {
    return {
      kind: "rejected",
      httpStatus: status,
      message:
        "This payment attempt clashed with an earlier one (its key was already used for a different request), so it was not processed. Press Pay to start a new attempt.",
    };
  }
  return { kind: "rejected", httpStatus: status ?? null, message: message ?? "The payment was refused." };
}

const PAYMENT_ANSWERS: Answers<TPayment, PaymentOutcome> = {
  succeeded: (payment) =>
    payment.status === "requires_action" && payment.nextAction
      ? { kind: "requires_action", payment, url: payment.nextAction.url }
      : { kind: "succeeded", payment },
  refused: paymentRefusal,
  unconfirmed: {
    kind: "unconfirmed",
    message: "We could not confirm your payment yet. It is saved: check again in a moment.",
  },
};

export function payWithRetries(deps: PayDeps, input: TPaymentInput, idempotencyKey: string) {
  return sendWithRetries(deps, PAYMENT_ANSWERS, input, idempotencyKey);
}
