/** The provider's test payment methods, as the shopper picks them. */
export const PAYMENT_METHODS = [
  { id: "pm_card_visa", label: "Visa test card", hint: "Always succeeds." },
  { id: "pm_card_declined", label: "Declined test card", hint: "Always declined by the bank." },
  { id: "pm_card_slow", label: "Slow Visa test card", hint: "Succeeds after about 2 seconds." },
  {
    id: "pm_card_authenticationRequired",
    label: "3-D Secure test card",
    hint: "Your bank asks you to confirm the payment first.",
  },
] as const;

export type TPaymentMethodId = (typeof PAYMENT_METHODS)[number]["id"];
export const DEFAULT_PAYMENT_METHOD: TPaymentMethodId = "pm_card_visa";

export function paymentMethodLabel(id: string): string {
  return PAYMENT_METHODS.find((m) => m.id === id)?.label ?? id;
}
