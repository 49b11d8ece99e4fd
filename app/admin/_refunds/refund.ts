/**
 * An operator's refund as an intent (app/_keyed): the Idempotency-Key is born when Refund is
 * pressed and saved with the intent before the request leaves, so a double click, a reload, a lost
 * answer or a spell offline ends in one refund. Plain TypeScript, tested without a browser.
 */
import { z } from "zod";
import { type IntentFactory, type IntentStorage, intentStore } from "../../_keyed/intent-store";
import { type Answers, classifyWith, RETRY_AFTER, type RetryDeps, sendWithRetries } from "../../_keyed/retry";
import { createRunner, IDLE as IDLE_STATE, type RunState } from "../../_keyed/runner";

export interface TRefundInput {
  paymentId: string;
  amountMinor: number;
  reason: string;
}

/** What `admin.refunds.create` answers (and replays). */
export interface TRefund {
  id: string;
  paymentId: string;
  amountMinor: number;
  currency: string;
  reason: string;
  status: string;
}

export const ZRefundIntent = z.object({
  paymentId: z.string().min(1),
  amountMinor: z.number().int().positive(),
  reason: z.string().min(1).max(200),
  idempotencyKey: z.string().min(1).max(255),
  createdAt: z.iso.datetime(),
  settled: z.enum(["succeeded", "refused", "rejected"]).optional(),
});
export type TRefundIntent = z.infer<typeof ZRefundIntent>;

/** One intent per payment: a new press of Refund replaces the payment's previous (finished) one. */
export const refundIntents = intentStore({
  prefix: "admin:refund-intent:",
  schema: ZRefundIntent,
  scopeOf: (intent) => intent.paymentId,
});

export type RefundOutcome =
  | { kind: "succeeded"; refund: TRefund }
  /**
   * The server refused the refund itself (more than is left to refund, a payment that cannot be
   * refunded): nothing was refunded by this intent. `refundableMinor` when the answer said it.
   */
  | { kind: "refused"; reason: string; message: string; refundableMinor: number | null }
  | { kind: "signed_out"; message: string }
  | { kind: "rejected"; httpStatus: number; message: string }
  | { kind: "unconfirmed"; message: string };

export const classifyRefundFailure = classifyWith<RefundOutcome>(
  ({ status, retryAfterMs, message, text, number }) => {
    if (status === 401) {
      return {
        kind: "signed_out",
        message: "Your admin session ended. Sign in again: the refund resumes with the same key.",
      };
    }
    const reason = text("reason");
    // Beyond what is left while another refund of the payment is still pending: not stored, and it
    // may yet fit if that one fails. The answer after the wait is the final one.
    if (reason === "refund_exceeds_captured" && retryAfterMs !== null) return RETRY_AFTER;
    if (reason !== null) {
      return {
        kind: "refused",
        reason,
        message: message ?? "The refund was refused.",
        refundableMinor: number("refundableMinor"),
      };
    }
    if (status === 422) {
      return {
        kind: "rejected",
        httpStatus: status,
        message:
          "This refund attempt clashed with an earlier one (its key was already used for a different request), so it was not processed. Press Refund to start a new attempt.",
      };
    }
    return { kind: "rejected", httpStatus: status, message: message ?? "The refund was refused." };
  },
);

const REFUND_ANSWERS: Answers<TRefund, RefundOutcome> = {
  succeeded: (refund) => ({ kind: "succeeded", refund }),
  classify: classifyRefundFailure,
  unconfirmed: {
    kind: "unconfirmed",
    message: "The refund is not confirmed yet. It is saved: this page goes on with it when reopened.",
  },
};

export type RefundDeps = RetryDeps<TRefundInput, TRefund>;

export function refundWithRetries(deps: RefundDeps, input: TRefundInput, idempotencyKey: string) {
  return sendWithRetries(deps, REFUND_ANSWERS, input, idempotencyKey);
}

export type RefundState = RunState<TRefundIntent, RefundOutcome>;
export const IDLE: RefundState = IDLE_STATE;

const SETTLED_BY: Partial<Record<RefundOutcome["kind"], NonNullable<TRefundIntent["settled"]>>> = {
  succeeded: "succeeded",
  refused: "refused",
  rejected: "rejected",
};

export interface RefunderDeps extends Omit<RefundDeps, "onProgress"> {
  storage(): IntentStorage;
  intents?: IntentFactory;
}

export type Refunder = ReturnType<typeof createRefunder>;

/** Refund intents, at most one per payment at a time (see createRunner). */
export function createRefunder(deps: RefunderDeps) {
  const runner = createRunner<TRefundIntent, RefundOutcome>({
    store: refundIntents,
    storage: deps.storage,
    intents: deps.intents,
    run: (intent, onProgress) =>
      refundWithRetries(
        { ...deps, onProgress },
        { paymentId: intent.paymentId, amountMinor: intent.amountMinor, reason: intent.reason },
        intent.idempotencyKey,
      ),
    settledBy: (outcome) => SETTLED_BY[outcome.kind],
    failed: { kind: "unconfirmed", message: "Something went wrong while confirming the refund." },
  });
  return {
    getState: runner.getState,
    subscribe: runner.subscribe,
    /** Goes on with the payment's unfinished refund, same key; null when there is none. */
    resume: runner.resume,
    /** A press of Refund: a new intent with a new key, unless this payment's refund is in flight. */
    refund: (input: TRefundInput) => runner.start(input.paymentId, input),
  };
}
