import {
  browserIntentFactory,
  type IntentFactory,
  type IntentStorage,
  readIntent,
  settleIntent,
  startIntent,
  type TPaymentIntent,
  type TSettledOutcome,
} from "./intent";
import { type PayDeps, type PaymentOutcome, type PaymentProgress, payWithRetries } from "./pay";

export type PayState =
  | { phase: "idle" }
  /** `resumed`: the intent was found saved (after a reload), not started by a press of Pay here. */
  | { phase: "paying"; intent: TPaymentIntent; progress: PaymentProgress; resumed: boolean }
  | { phase: "done"; intent: TPaymentIntent; outcome: PaymentOutcome };

export const IDLE: PayState = { phase: "idle" };

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

/**
 * Runs payment intents, at most one per order at a time, and publishes their progress as a
 * store React can subscribe to. Pressing Pay while the order's intent is in flight (a double
 * click, a button whose disabled state was removed) joins that intent instead of making a key.
 */
export function createPayer(deps: PayerDeps) {
  const states = new Map<string, PayState>();
  const running = new Map<string, Promise<PaymentOutcome>>();
  const listeners = new Set<() => void>();

  function publish(orderId: string, state: PayState) {
    states.set(orderId, state);
    for (const listener of listeners) listener();
  }

  function run(intent: TPaymentIntent, resumed: boolean): Promise<PaymentOutcome> {
    const { orderId } = intent;
    const outcome = (async (): Promise<PaymentOutcome> => {
      let result: PaymentOutcome;
      try {
        result = await payWithRetries(
          {
            ...deps,
            onProgress: (progress) => publish(orderId, { phase: "paying", intent, progress, resumed }),
          },
          { orderId, paymentMethod: intent.paymentMethod },
          intent.idempotencyKey,
        );
      } catch (error) {
        // A bug, not an answer: the charge may exist, so keep the intent for a resume.
        console.error("payment loop failed", error);
        result = { kind: "unconfirmed", message: "Something went wrong while confirming your payment." };
      }
      running.delete(orderId);
      const settled = SETTLED_BY[result.kind];
      if (settled) settleIntent(deps.storage(), intent, settled);
      publish(orderId, { phase: "done", intent, outcome: result });
      return result;
    })();
    running.set(orderId, outcome);
    return outcome;
  }

  return {
    getState(orderId: string): PayState {
      return states.get(orderId) ?? IDLE;
    },
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** A press of Pay: a new intent with a new key, unless this order's intent is in flight. */
    pay(orderId: string, paymentMethod: string): Promise<PaymentOutcome> {
      const inFlight = running.get(orderId);
      if (inFlight) return inFlight;
      const intent = startIntent(
        deps.storage(),
        { orderId, paymentMethod },
        deps.intents ?? browserIntentFactory,
      );
      return run(intent, false);
    },
    /** Goes on with the order's unfinished intent, same key; null when there is none. */
    resume(orderId: string): Promise<PaymentOutcome> | null {
      const inFlight = running.get(orderId);
      if (inFlight) return inFlight;
      const intent = readIntent(deps.storage(), orderId);
      if (!intent || intent.settled) return null;
      return run(intent, true);
    },
  };
}
