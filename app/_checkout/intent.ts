import { z } from "zod";
import { browserIntents, latestUnanswered, legacyIntent, type StoredIntent } from "../_keyed/intents";

/**
 * What a payment intent asks for: one order, paid with one payment method; `returnUrl` is where
 * the bank's 3-D Secure step sends the shopper back (part of the request, so the same on every retry).
 */
export const ZPaymentInput = z.object({
  orderId: z.string().min(1),
  paymentMethod: z.string().min(1),
  returnUrl: z.string().min(1).optional(),
});
export type TPaymentInput = z.infer<typeof ZPaymentInput>;
/** A payment intent: its order is its id, so a new press replaces the order's previous intent. */
export type TPaymentIntent = StoredIntent<TPaymentInput>;

const PREFIX = "checkout:intent:";

/** The checkout's payment intents in `storage` (localStorage in the page). */
export function paymentIntents(storage: () => Storage) {
  return browserIntents({
    prefix: PREFIX,
    request: ZPaymentInput,
    storage,
    legacy: legacyIntent(ZPaymentInput, (input) => input.orderId),
  });
}

/** The most recent unfinished intent of any order: what reopening the checkout resumes. */
export async function latestUnfinishedIntent(storage: () => Storage): Promise<TPaymentIntent | null> {
  return latestUnanswered(await paymentIntents(storage).list());
}
