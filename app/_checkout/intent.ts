import { z } from "zod";
import { type IntentFactory, type IntentStorage, intentStore } from "../_keyed/intent-store";

export { browserIntentFactory, type IntentFactory, type IntentStorage } from "../_keyed/intent-store";

/** A payment intent: one attempt to pay one order with one payment method (see intentStore). */
export const ZPaymentIntent = z.object({
  orderId: z.string().min(1),
  paymentMethod: z.string().min(1),
  idempotencyKey: z.string().min(1).max(255),
  createdAt: z.iso.datetime(),
  settled: z.enum(["succeeded", "declined", "already_paid", "rejected"]).optional(),
});
export type TPaymentIntent = z.infer<typeof ZPaymentIntent>;
export type TSettledOutcome = NonNullable<TPaymentIntent["settled"]>;

export const paymentIntents = intentStore({
  prefix: "checkout:intent:",
  schema: ZPaymentIntent,
  scopeOf: (intent) => intent.orderId,
});

/** The order's intent, or null when there is none or what is stored is not one. */
export function readIntent(storage: IntentStorage, orderId: string): TPaymentIntent | null {
  return paymentIntents.read(storage, orderId);
}

/** A new intent with a new key, saved (replacing the order's previous one) before it is returned. */
export function startIntent(
  storage: IntentStorage,
  request: { orderId: string; paymentMethod: string },
  factory?: IntentFactory,
): TPaymentIntent {
  return paymentIntents.start(storage, request, factory);
}

/** Records the outcome of `intent`, unless another tab has since replaced the order's intent. */
export function settleIntent(storage: IntentStorage, intent: TPaymentIntent, outcome: TSettledOutcome) {
  paymentIntents.settle(storage, intent, outcome);
}

/** The most recent unfinished intent of any order: what reopening the checkout resumes. */
export function latestUnfinishedIntent(storage: IntentStorage): TPaymentIntent | null {
  return paymentIntents.latestUnfinished(storage);
}
