import { createRunner, IDLE as IDLE_STATE, type IntentFactory, type RunState } from "../_keyed/runner";
import { paymentIntents, type TPaymentInput } from "./intent";
import { type PayDeps, type PaymentOutcome, payWithRetries } from "./pay";

export type PayState = RunState<TPaymentInput, PaymentOutcome>;

export const IDLE: PayState = IDLE_STATE;

export interface PayerDeps extends Omit<PayDeps, "onProgress"> {
  /** Read lazily: there is no localStorage while the server renders. */
  storage(): Storage;
  intents?: IntentFactory;
}

/**
 * The status each final outcome is kept with on its intent; the others (a 3-D Secure step under
 * way among them) leave it to be resumed with its key.
 */
const ANSWER_STATUS: Partial<Record<PaymentOutcome["kind"], number>> = {
  succeeded: 200,
  declined: 402,
  already_paid: 409,
};

export type Payer = ReturnType<typeof createPayer>;

/** Payment intents, at most one per order at a time (see createRunner). */
export function createPayer(deps: PayerDeps) {
  const runner = createRunner<TPaymentInput, PaymentOutcome>({
    store: paymentIntents(deps.storage),
    scopeOf: (input) => input.orderId,
    intents: deps.intents,
    run: (intent, onProgress) => payWithRetries({ ...deps, onProgress }, intent.request, intent.key),
    answerStatus: (outcome) =>
      outcome.kind === "rejected" ? (outcome.httpStatus ?? 400) : ANSWER_STATUS[outcome.kind],
    failed: { kind: "unconfirmed", message: "Something went wrong while confirming your payment." },
  });
  return {
    getState: runner.getState,
    subscribe: runner.subscribe,
    resume: runner.resume,
    /**
     * A press of Pay: a new intent with a new key, unless this order's intent is in flight.
     * `returnUrl`: where the bank's 3-D Secure step sends the shopper back to resume it.
     */
    pay: (orderId: string, paymentMethod: string, returnUrl?: string) =>
      runner.start(returnUrl ? { orderId, paymentMethod, returnUrl } : { orderId, paymentMethod }),
  };
}
