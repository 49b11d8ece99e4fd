/**
 * The payment methods the simulator knows: Stripe's test PaymentMethods by the ids Stripe documents
 * (docs.stripe.com/testing), with the outcome Stripe gives each, and three of our own kept from the
 * simulator's first API (`pm_card_declined`, `pm_card_slow`, and `pm_card_visa`, which is Stripe's).
 * Any other id is refused as Stripe refuses an unknown PaymentMethod (404 `resource_missing`).
 */

/** What a card does once its holder has authenticated (3-D Secure). */
export type AuthorizationOutcome =
  | { kind: "succeeds"; delayed?: boolean }
  | { kind: "declined"; code: string; declineCode: string; message: string };

export type CardOutcome = AuthorizationOutcome | { kind: "requires_action"; then: AuthorizationOutcome };

export interface TestCard {
  brand: string;
  last4: string;
  funding: "credit" | "debit";
  outcome: CardOutcome;
}

const succeeds: AuthorizationOutcome = { kind: "succeeds" };

function declined(code: string, declineCode: string, message: string): AuthorizationOutcome {
  return { kind: "declined", code, declineCode, message };
}

const authenticates = (then: AuthorizationOutcome): CardOutcome => ({ kind: "requires_action", then });

const GENERIC = declined("card_declined", "generic_decline", "Your card was declined.");
const INSUFFICIENT = declined("card_declined", "insufficient_funds", "Your card has insufficient funds.");
const LOST = declined("card_declined", "lost_card", "Your card was declined.");
const STOLEN = declined("card_declined", "stolen_card", "Your card was declined.");

const card = (
  brand: string,
  last4: string,
  outcome: CardOutcome,
  funding: "credit" | "debit" = "credit",
) => ({
  brand,
  last4,
  funding,
  outcome,
});

export const TEST_CARDS: ReadonlyMap<string, TestCard> = new Map([
  ["pm_card_visa", card("visa", "4242", succeeds)],
  ["pm_card_visa_debit", card("visa", "5556", succeeds, "debit")],
  ["pm_card_mastercard", card("mastercard", "4444", succeeds)],
  ["pm_card_mastercard_debit", card("mastercard", "8210", succeeds, "debit")],
  ["pm_card_amex", card("amex", "8431", succeeds)],
  ["pm_card_discover", card("discover", "1117", succeeds)],
  ["pm_card_jcb", card("jcb", "0505", succeeds)],
  ["pm_card_unionpay", card("unionpay", "0005", succeeds)],
  ["pm_card_chargeDeclined", card("visa", "0002", GENERIC)],
  ["pm_card_visa_chargeDeclined", card("visa", "0002", GENERIC)],
  ["pm_card_chargeDeclinedInsufficientFunds", card("visa", "9995", INSUFFICIENT)],
  ["pm_card_visa_chargeDeclinedInsufficientFunds", card("visa", "9995", INSUFFICIENT)],
  ["pm_card_chargeDeclinedLostCard", card("visa", "9987", LOST)],
  ["pm_card_visa_chargeDeclinedLostCard", card("visa", "9987", LOST)],
  ["pm_card_chargeDeclinedStolenCard", card("visa", "9979", STOLEN)],
  ["pm_card_visa_chargeDeclinedStolenCard", card("visa", "9979", STOLEN)],
  [
    "pm_card_chargeDeclinedFraudulent",
    card("visa", "0019", declined("card_declined", "fraudulent", "Your card was declined.")),
  ],
  [
    "pm_card_chargeDeclinedExpiredCard",
    card("visa", "0069", declined("expired_card", "expired_card", "Your card has expired.")),
  ],
  [
    "pm_card_chargeDeclinedIncorrectCvc",
    card(
      "visa",
      "0127",
      declined("incorrect_cvc", "incorrect_cvc", "Your card's security code is incorrect."),
    ),
  ],
  [
    "pm_card_chargeDeclinedProcessingError",
    card(
      "visa",
      "0119",
      declined(
        "processing_error",
        "processing_error",
        "An error occurred while processing your card. Try again in a little bit.",
      ),
    ),
  ],
  [
    "pm_card_visa_chargeDeclinedVelocityLimitExceeded",
    card(
      "visa",
      "6975",
      declined(
        "card_declined",
        "card_velocity_exceeded",
        "Your card was declined for making repeated attempts too frequently or exceeding its amount limit.",
      ),
    ),
  ],
  // 3-D Secure (docs.stripe.com/testing#regulatory-cards, #three-ds-cards): a challenge on every
  // on-session payment, then the card's answer. Optional or unsupported 3-D Secure just succeeds.
  ["pm_card_authenticationRequired", card("visa", "3184", authenticates(succeeds))],
  ["pm_card_authenticationRequiredOnSetup", card("visa", "3155", authenticates(succeeds))],
  ["pm_card_authenticationRequiredSetupForOffSession", card("visa", "0446", authenticates(succeeds))],
  ["pm_card_threeDSecure2Required", card("visa", "3220", authenticates(succeeds))],
  ["pm_card_threeDSecureRequired", card("visa", "3063", authenticates(succeeds))],
  ["pm_card_threeDSecureRequiredChargeDeclined", card("visa", "1629", authenticates(GENERIC))],
  [
    "pm_card_authenticationRequiredChargeDeclinedInsufficientFunds",
    card("visa", "3178", authenticates(INSUFFICIENT)),
  ],
  ["pm_card_threeDSecureOptional", card("visa", "3055", succeeds)],
  ["pm_card_amex_threeDSecureNotSupported", card("amex", "0005", succeeds)],
  // Ours, from the simulator's first API.
  ["pm_card_declined", card("visa", "0002", GENERIC)],
  ["pm_card_slow", card("visa", "4242", { kind: "succeeds", delayed: true })],
]);

/** A test card as Stripe's PaymentMethod object. */
export function paymentMethodObject(id: string, created: number) {
  const found = TEST_CARDS.get(id);
  return {
    id,
    object: "payment_method",
    type: "card",
    card: {
      brand: found?.brand ?? "visa",
      last4: found?.last4 ?? "4242",
      funding: found?.funding ?? "credit",
      exp_month: 12,
      exp_year: new Date(created * 1000).getUTCFullYear() + 3,
      country: "US",
    },
    billing_details: { address: null, email: null, name: null, phone: null },
    created,
    customer: null,
    livemode: false,
    metadata: {},
  };
}
