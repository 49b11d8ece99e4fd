import type { PaymentProvider, Refund } from "../payments/provider";

export { isProviderError, type ProviderError } from "../payments/provider";

/** A refund at the provider, as its client returns it. */
export type ProviderRefund = Refund;

/** What refunds need of the payment provider. */
export type RefundProvider = Pick<PaymentProvider, "createRefund" | "listRefunds" | "getCharge">;
