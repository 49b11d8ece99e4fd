import type * as core from "./core/intents.js";
import type { components } from "./generated/api.js";

/**
 * A payment method id: the test provider's three, or any other `pm_…` id a provider issues (the
 * API checks the shape; the provider refuses a method it does not know, 402 `payment-refused`).
 */
export type PaymentMethod = "pm_card_visa" | "pm_card_declined" | "pm_card_slow" | `pm_${string}`;

/** What a payment intent asks the API for: the body of `POST /api/v1/payments`. */
export type PaymentRequest = {
  orderId: string;
  paymentMethod: PaymentMethod;
  /** `manual`: authorize only (the payment answers `authorized`); default the merchant's setting. */
  captureMethod?: "automatic" | "manual";
  /** Where the shopper comes back after a 3-D Secure step. */
  returnUrl?: string;
};

/** An operator's capture of an authorized payment: all of it, or `amountMinor` (the rest is released). */
export type CaptureRequest = { paymentId: string; amountMinor?: number };

/** An operator's cancel of an authorized payment: the hold released, nothing charged. */
export type CancelRequest = { paymentId: string };

/** The operations an intent can stand for (refunds join here when the API has them). */
export type IntentRequest =
  | { operation: "payments.create"; body: PaymentRequest }
  | { operation: "payments.capture"; body: CaptureRequest }
  | { operation: "payments.cancel"; body: CancelRequest };

/** The SDK's intents: see the core's `StoredIntent` (`@idempotent-checkout/client/core`). */
export type StoredIntent = core.StoredIntent<IntentRequest>;
export type IntentStore = core.IntentStore<IntentRequest>;
export type { StoredAnswer } from "./core/intents.js";

export type Payment = components["schemas"]["Payment"];
export type Problem = components["schemas"]["Problem"];

/** A payment as the API answered it, with what the client knows about the answer. */
export type PaymentResult = Payment & {
  /** The intent this payment settled. */
  intentId: string;
  /** The server (or the store, for an answer kept with its intent) answered with the stored first response. */
  replayed: boolean;
};

/** Whether two intents ask for the same thing (ids compared as the API does, case aside). */
export function sameRequest(a: IntentRequest, b: IntentRequest): boolean {
  const same = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();
  switch (a.operation) {
    case "payments.create":
      return (
        b.operation === a.operation &&
        same(a.body.orderId, b.body.orderId) &&
        a.body.paymentMethod === b.body.paymentMethod
      );
    case "payments.capture":
      return (
        b.operation === a.operation &&
        same(a.body.paymentId, b.body.paymentId) &&
        a.body.amountMinor === b.body.amountMinor
      );
    case "payments.cancel":
      return b.operation === a.operation && same(a.body.paymentId, b.body.paymentId);
  }
}

/** An intent's request in a few words, for an `intent-conflict` message. */
export function describeRequest(r: IntentRequest): string {
  switch (r.operation) {
    case "payments.create":
      return `a payment of order ${r.body.orderId} with ${r.body.paymentMethod}`;
    case "payments.capture":
      return `a capture of ${r.body.amountMinor ?? "all"} of payment ${r.body.paymentId}`;
    case "payments.cancel":
      return `a cancel of payment ${r.body.paymentId}`;
  }
}
