import Stripe from "stripe";
import { z } from "zod";

/** Stripe's default: a signature older than five minutes is a replay, refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The part of a provider event the app reads (Stripe's Event; its object is a PaymentIntent or a Refund). */
export const ZProviderEvent = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative(),
  data: z.object({
    object: z.looseObject({
      id: z.string().min(1).max(255),
      object: z.string(),
      status: z.string().optional(),
      metadata: z.record(z.string(), z.string()).optional(),
    }),
  }),
});
export type ProviderEvent = z.infer<typeof ZProviderEvent>;

export type Verified =
  | { ok: true; event: ProviderEvent }
  | { ok: false; reason: "signature" | "not_an_event"; message: string };

/**
 * A webhook's raw body checked with the SDK's `constructEvent` (HMAC-SHA256 over `t.body`, the
 * timestamp within the tolerance) against each secret in turn: during a rotation the old and the
 * new secret both sign. Only then is the body read as an event.
 */
export function verifyEvent(rawBody: string, signature: string | null, secrets: readonly string[]): Verified {
  if (!signature)
    return { ok: false, reason: "signature", message: "The Stripe-Signature header is missing." };
  let parsed: unknown;
  let lastError = "No webhook secret is configured.";
  for (const secret of secrets) {
    try {
      parsed = Stripe.webhooks.constructEvent(rawBody, signature, secret, SIGNATURE_TOLERANCE_SECONDS);
      break;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }
  if (parsed === undefined) return { ok: false, reason: "signature", message: lastError };
  const event = ZProviderEvent.safeParse(parsed);
  if (!event.success) {
    return {
      ok: false,
      reason: "not_an_event",
      message: `The body is not a provider event: ${z.prettifyError(event.error)}`,
    };
  }
  return { ok: true, event: event.data };
}
