import type { components } from "./generated/api.js";

/**
 * A payment method id: the test provider's three, or any other `pm_…` id a provider issues (the
 * API checks the shape; the provider refuses a method it does not know, 402 `payment-refused`).
 */
export type PaymentMethod = "pm_card_visa" | "pm_card_declined" | "pm_card_slow" | `pm_${string}`;

/** What a payment intent asks the API for: the body of `POST /api/v1/payments`. */
export type PaymentRequest = { orderId: string; paymentMethod: PaymentMethod };

/** The operations an intent can stand for (refunds join here when the API has them). */
export type IntentRequest = { operation: "payments.create"; body: PaymentRequest };

/**
 * One unfinished call, written to the store before its first attempt leaves the process. The key
 * is made once, with the intent, and every attempt (in this process or after a restart) sends it.
 */
export interface StoredIntent {
  /** The caller's id for this intent (e.g. their payout row's id), unique in the store. */
  intentId: string;
  /** The `Idempotency-Key` every attempt sends. */
  key: string;
  request: IntentRequest;
  /** ISO 8601. */
  createdAt: string;
}

/**
 * Where intents live between the first attempt and a final answer. Implement these three to add
 * a store; each must be durable when its promise resolves (the write survives a crash of this
 * process right after), and `create` must be atomic against another process creating the same id.
 */
export interface IntentStore {
  /**
   * Stores the intent unless one with its `intentId` is already there; resolves to the one that
   * is stored (the given one, or the earlier one, which is then left untouched).
   */
  create(intent: StoredIntent): Promise<StoredIntent>;
  /** Every stored intent, oldest first. */
  list(): Promise<StoredIntent[]>;
  /** Forgets an intent; forgetting one that is not there is not an error. */
  delete(intentId: string): Promise<void>;
}

export type Payment = components["schemas"]["Payment"];
export type Problem = components["schemas"]["Problem"];

/** A payment as the API answered it, with what the client knows about the answer. */
export type PaymentResult = Payment & {
  /** The intent this payment settled. */
  intentId: string;
  /** The server answered with its stored first response (`Idempotent-Replayed: true`). */
  replayed: boolean;
};

export const sameRequest = (a: IntentRequest, b: IntentRequest) =>
  a.operation === b.operation &&
  a.body.orderId.toLowerCase() === b.body.orderId.toLowerCase() &&
  a.body.paymentMethod === b.body.paymentMethod;
