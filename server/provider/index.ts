import { env } from "../env";
import { stripeProvider } from "./stripe";
import type { PaymentProvider } from "./types";

/**
 * The app's one binding of the payment provider. Payments, refunds and the reconciler know the
 * provider only through the PaymentProvider interface; stripe.ts implements it with Stripe's SDK,
 * pointed at PAYMENT_PROVIDER_URL (the simulator in development and tests) or, unset, at Stripe.
 */
export { isProviderError, ProviderError, type ProviderErrorKind } from "./errors";
export {
  chargeOf,
  KEY_METADATA,
  STRIPE_API_VERSION,
  type StripeProviderOptions,
  stripeProvider,
} from "./stripe";
export type {
  CallOptions,
  CaptureChargeInput,
  Charge,
  ChargeStatus,
  CreateChargeInput,
  CreateRefundInput,
  ListChargesOptions,
  ListedEvent,
  ListRefundsOptions,
  PaymentProvider,
  Refund,
  RefundProvider,
} from "./types";

/**
 * The key sent when PAYMENT_PROVIDER_SECRET is unset: a test-mode key, which a test-mode API that
 * takes any `sk_test_` key accepts (as stripe-mock does) and a real Stripe account refuses (401).
 */
export const UNSET_TEST_KEY = "sk_test_idempotent_checkout";

/**
 * The provider at `baseUrl` with the given key, as the binding makes it (tests and the lab make
 * their own, e.g. with a short timeout). The name of the hand-written client this replaced, kept
 * for the tests of payments, refunds and the reconciler.
 */
export function httpProvider(opts: {
  baseUrl: string;
  secret?: string;
  timeoutMs?: number;
}): PaymentProvider {
  return stripeProvider({
    baseUrl: opts.baseUrl,
    secretKey: opts.secret || UNSET_TEST_KEY,
    timeoutMs: opts.timeoutMs,
  });
}

const holder = globalThis as unknown as { paymentProvider?: PaymentProvider };

/** The provider this process talks to; the app knows it only through the PaymentProvider interface. */
export function paymentProvider(): PaymentProvider {
  if (!holder.paymentProvider) {
    if (!env.PAYMENT_PROVIDER_URL && !env.PAYMENT_PROVIDER_SECRET) {
      throw new Error(
        "No payment provider configured: set PAYMENT_PROVIDER_URL (`npm run dev` and `npm start` start the simulator and set it), " +
          "or PAYMENT_PROVIDER_SECRET alone for Stripe itself.",
      );
    }
    holder.paymentProvider = stripeProvider({
      baseUrl: env.PAYMENT_PROVIDER_URL,
      secretKey: env.PAYMENT_PROVIDER_SECRET || UNSET_TEST_KEY,
      timeoutMs: PROVIDER_TIMEOUT_MS,
      maxNetworkRetries: PROVIDER_MAX_NETWORK_RETRIES,
    });
  }
  return holder.paymentProvider;
}

/** Decision 0170: one try per call (our callers retry with the same key), 10 s without an answer. */
export const PROVIDER_TIMEOUT_MS = 10_000;
export const PROVIDER_MAX_NETWORK_RETRIES = 0;
