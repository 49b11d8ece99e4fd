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

/** The operations an intent can stand for (refunds join here when the API has them). */
export type IntentRequest = { operation: "payments.create"; body: PaymentRequest };

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

export const sameRequest = (a: IntentRequest, b: IntentRequest) =>
  a.operation === b.operation &&
  a.body.orderId.toLowerCase() === b.body.orderId.toLowerCase() &&
  a.body.paymentMethod === b.body.paymentMethod;
