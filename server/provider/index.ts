import { httpProvider, type PaymentProvider } from "../../provider/client";
import { env } from "../env";

/**
 * The app's one binding of the payment provider. Payments, refunds and the reconciler know the
 * provider only through the PaymentProvider interface; an adapter for another provider (Stripe's
 * SDK, say) implements it and is returned here instead of the HTTP client of the simulator.
 */
export type {
  Charge,
  CreateChargeInput,
  CreateRefundInput,
  PaymentProvider,
  Refund,
} from "../../provider/client";
export { httpProvider, isProviderError, ProviderError } from "../../provider/client";

/** What refunds need of the provider. */
export type RefundProvider = Pick<PaymentProvider, "createRefund" | "listRefunds" | "getCharge">;

const holder = globalThis as unknown as { paymentProvider?: PaymentProvider };

/** The provider this process talks to; the app knows it only through the PaymentProvider interface. */
export function paymentProvider(): PaymentProvider {
  if (!holder.paymentProvider) {
    if (!env.PAYMENT_PROVIDER_URL) {
      throw new Error(
        "PAYMENT_PROVIDER_URL is not set: start the app with `npm run dev` or `npm start`, or set it.",
      );
    }
    holder.paymentProvider = httpProvider({
      baseUrl: env.PAYMENT_PROVIDER_URL,
      secret: env.PAYMENT_PROVIDER_SECRET,
      timeoutMs: 10_000,
    });
  }
  return holder.paymentProvider;
}
