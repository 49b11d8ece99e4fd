import type { IntentFactory, IntentStorage } from "../_keyed/intent-store";
import { createRunner, IDLE as IDLE_STATE, type RunState } from "../_keyed/runner";
import { paymentIntents, type TPaymentIntent, type TSettledOutcome } from "./intent";
import { type PayDeps, type PaymentOutcome, payWithRetries } from "./pay";

export type PayState = RunState<TPaymentIntent, PaymentOutcome>;

export const IDLE: PayState = IDLE_STATE;

export interface PayerDeps extends Omit<PayDeps, "onProgress"> {
  /** Read lazily: there is no localStorage while the server renders. */
  storage(): IntentStorage;
  intents?: IntentFactory;
}

/** Outcomes that end an intent; the others leave it unfinished, for a resume with the same key. */
const SETTLED_BY: Partial<Record<PaymentOutcome["kind"], TSettledOutcome>> = {
  succeeded: "succeeded",
  declined: "declined",
  already_paid: "already_paid",
  rejected: "rejected",
};

export type Payer = ReturnType<typeof createPayer>;

/** Payment intents, at most one per order at a time (see createRunner). */
export function createPayer(deps: PayerDeps) {
  const runner = createRunner<TPaymentIntent, PaymentOutcome>({
    store: paymentIntents,
    storage: deps.storage,
    intents: deps.intents,
    run: (intent, onProgress) =>
      payWithRetries(
        { ...deps, onProgress },
        { orderId: intent.orderId, paymentMethod: intent.paymentMethod },
        intent.idempotencyKey,
      ),
    settledBy: (outcome) => SETTLED_BY[outcome.kind],
    failed: { kind: "unconfirmed", message: "Something went wrong while confirming your payment." },
  });
  return {
    getState: runner.getState,
    subscribe: runner.subscribe,
    resume: runner.resume,
    /** A press of Pay: a new intent with a new key, unless this order's intent is in flight. */
    pay: (orderId: string, paymentMethod: string) => runner.start(orderId, { orderId, paymentMethod }),
  };
}
