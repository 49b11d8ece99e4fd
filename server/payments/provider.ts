import { httpProvider, type PaymentProvider } from "../../provider/client";
import { env } from "../env";

export type { Charge, PaymentProvider, Refund } from "../../provider/client";
export { httpProvider, isProviderError, ProviderError } from "../../provider/client";

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
