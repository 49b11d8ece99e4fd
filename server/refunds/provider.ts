import type { PaymentProvider } from "../payments/provider";

export { isProviderError, type ProviderError } from "../payments/provider";

/** A refund at the provider, as its client returns it (provider/client.ts, the refunds contract). */
export interface ProviderRefund {
  id: string;
  charge: string;
  amount: number;
  currency: string;
  status: "succeeded";
  createdAt: string;
  metadata: Record<string, string>;
}

/** What refunds need of the payment provider: its refunds, beside the charges the payments use. */
export interface RefundProvider {
  createRefund(
    input: { charge: string; amount: number; metadata?: Record<string, string> },
    idempotencyKey: string,
    opts?: { fault?: string },
  ): Promise<ProviderRefund>;
  listRefunds(opts?: {
    charge?: string;
    createdGte?: Date;
    idempotencyKey?: string;
    metadata?: Record<string, string>;
  }): AsyncIterable<ProviderRefund>;
}

/** The configured provider as the refunds see it. */
export function asRefundProvider(provider: PaymentProvider): RefundProvider {
  return provider as unknown as RefundProvider;
}
