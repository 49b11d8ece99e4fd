/**
 * Stripe's objects as the app's (types.ts): a PaymentIntent as a Charge, a Refund as a Refund.
 */
import type Stripe from "stripe";
import { ProviderError } from "./errors";
import type { Charge, ChargeStatus, Refund } from "./types";

/** Where the adapter keeps the idempotency key a payment or refund was made with (Stripe lists no key). */
export const KEY_METADATA = "idempotency_key";

export function withoutKey(metadata: Stripe.Metadata | null | undefined): Record<string, string> {
  const { [KEY_METADATA]: _key, ...rest } = metadata ?? {};
  return rest;
}

const isoOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/** Stripe's statuses the app tells apart; the others are pending (requires_payment_method: declined if it failed). */
const STATUS_OF: Partial<Record<Stripe.PaymentIntent.Status, ChargeStatus>> = {
  succeeded: "succeeded",
  requires_capture: "authorized",
  requires_action: "requires_action",
  canceled: "canceled",
};

/** A PaymentIntent as the app's Charge (see ChargeStatus). */
export function chargeOf(pi: Stripe.PaymentIntent): Charge {
  const error = pi.last_payment_error;
  const declined = pi.status === "requires_payment_method" && error != null;
  const status: ChargeStatus = declined ? "declined" : (STATUS_OF[pi.status] ?? "pending");
  const paymentMethod =
    typeof pi.payment_method === "string"
      ? pi.payment_method
      : (pi.payment_method?.id ?? error?.payment_method?.id ?? "");
  const redirect = pi.next_action?.type === "redirect_to_url" ? pi.next_action.redirect_to_url : undefined;
  return {
    id: pi.id,
    amount: pi.amount,
    currency: pi.currency,
    paymentMethod,
    status,
    failureCode: declined ? (error.decline_code ?? error.code ?? "card_declined") : null,
    failureMessage: declined ? (error.message ?? null) : null,
    createdAt: isoOf(pi.created),
    metadata: withoutKey(pi.metadata),
    amountCapturable: pi.amount_capturable ?? 0,
    amountReceived: pi.amount_received ?? 0,
    nextActionUrl: status === "requires_action" ? (redirect?.url ?? null) : null,
    cancellationReason: pi.status === "canceled" ? (pi.cancellation_reason ?? null) : null,
  };
}

export function refundOf(r: Stripe.Refund): Refund {
  const charge = typeof r.payment_intent === "string" ? r.payment_intent : (r.payment_intent?.id ?? "");
  if (r.status !== "succeeded") {
    // Card refunds succeed at once; another status would need the app to wait for refund.updated.
    throw new ProviderError(`refund ${r.id} is ${r.status}`, {
      kind: "pending",
      code: r.status ?? undefined,
    });
  }
  return {
    id: r.id,
    charge,
    amount: r.amount,
    currency: r.currency,
    status: "succeeded",
    createdAt: isoOf(r.created),
    metadata: withoutKey(r.metadata),
  };
}
