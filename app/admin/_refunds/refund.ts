/**
 * An operator's refund as an intent (app/_keyed): the Idempotency-Key is born when Refund is
 * pressed and saved with the intent before the request leaves, so a double click, a reload, a lost
 * answer or a spell offline ends in one refund. Plain TypeScript, tested without a browser.
 */
import type { inferRouterOutputs } from "@trpc/server";
import { z } from "zod";
import type { AppRouter } from "@/server/root";
import { browserIntents, legacyIntent } from "../../_keyed/intents";
import { createRunner, IDLE as IDLE_STATE, type IntentFactory, type RunState } from "../../_keyed/runner";
import { type Answers, type SendDeps, sendWithRetries } from "../../_keyed/send";
import type { FailedCall } from "../../_keyed/trpc-attempt";

export const ZRefundInput = z.object({
  paymentId: z.string().min(1),
  amountMinor: z.number().int().positive(),
  reason: z.string().min(1).max(200),
});
export type TRefundInput = z.infer<typeof ZRefundInput>;

/** What `admin.refunds.create` answers (and replays). */
export type TRefund = inferRouterOutputs<AppRouter>["admin"]["refunds"]["create"];

/** One intent per payment: a new press of Refund replaces the payment's previous (finished) one. */
export function refundIntents(storage: () => Storage) {
  return browserIntents({
    prefix: "admin:refund-intent:",
    request: ZRefundInput,
    storage,
    legacy: legacyIntent(ZRefundInput, (input) => input.paymentId),
  });
}

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

export function refundRefusal({ status, message, text, number }: FailedCall): RefundOutcome {
  if (status === 401) {
    return {
      kind: "signed_out",
      message: "Your admin session ended. Sign in again: the refund resumes with the same key.",
    };
  }
  // A reason is the refund refused itself (beyond what is left, a payment that cannot be refunded);
  // the same refusal while another refund is pending comes with Retry-After and is retried.
  const reason = text("reason");
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
  return { kind: "rejected", httpStatus: status ?? 0, message: message ?? "The refund was refused." };
}

const REFUND_ANSWERS: Answers<TRefund, RefundOutcome> = {
  succeeded: (refund) => ({ kind: "succeeded", refund }),
  refused: refundRefusal,
  unconfirmed: {
    kind: "unconfirmed",
    message:
      "The refund is not confirmed yet. It is saved: Refund then Confirm checks it again with the same key, as reopening this page does.",
  },
};

export type RefundDeps = SendDeps<TRefundInput, TRefund>;

export function refundWithRetries(deps: RefundDeps, input: TRefundInput, idempotencyKey: string) {
  return sendWithRetries(deps, REFUND_ANSWERS, input, idempotencyKey);
}

export type RefundState = RunState<TRefundInput, RefundOutcome>;
export const IDLE: RefundState = IDLE_STATE;

/** The status each final outcome is kept with on its intent; the others leave it to be resumed. */
function answerStatus(outcome: RefundOutcome): number | undefined {
  if (outcome.kind === "succeeded") return 200;
  if (outcome.kind === "refused") return 422;
  return outcome.kind === "rejected" ? outcome.httpStatus : undefined;
}

/** The request of a refund that ended without a final answer: the next Confirm goes on with it. */
export function unfinishedRequest(state: RefundState): TRefundInput | null {
  return state.phase === "done" && answerStatus(state.outcome) === undefined ? state.intent.request : null;
}

export interface RefunderDeps extends Omit<RefundDeps, "onProgress"> {
  storage(): Storage;
  intents?: IntentFactory;
}

export type Refunder = ReturnType<typeof createRefunder>;

/** Refund intents, at most one per payment at a time (see createRunner). */
export function createRefunder(deps: RefunderDeps) {
  const runner = createRunner<TRefundInput, RefundOutcome>({
    store: refundIntents(deps.storage),
    scopeOf: (input) => input.paymentId,
    intents: deps.intents,
    run: (intent, onProgress) => refundWithRetries({ ...deps, onProgress }, intent.request, intent.key),
    answerStatus,
    failed: { kind: "unconfirmed", message: "Something went wrong while confirming the refund." },
  });
  return {
    getState: runner.getState,
    subscribe: runner.subscribe,
    /** Goes on with the payment's unfinished refund, same key; null when there is none. */
    resume: runner.resume,
    /**
     * A press of Confirm: the refund this page left unfinished (unconfirmed after its retries,
     * signed out) goes on with its key and request; otherwise a new intent with a new key, unless
     * this payment's refund is in flight here. Another tab's intent in the shared storage is not
     * taken over: its own page goes on with it.
     */
    async confirm(input: TRefundInput): Promise<RefundOutcome> {
      if (unfinishedRequest(runner.getState(input.paymentId))) {
        const resumed = await runner.resume(input.paymentId);
        if (resumed) return resumed;
      }
      return runner.start(input);
    },
  };
}
