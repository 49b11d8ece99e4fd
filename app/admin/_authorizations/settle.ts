/**
 * An operator's capture or cancel of one authorization as an intent (app/_keyed), keyed like a
 * refund: the Idempotency-Key is born at the press and saved before the request leaves, so a
 * double click, a reload or a lost answer ends in one capture (or one cancel). One intent per
 * payment: a later press replaces the earlier one, and so does its outcome.
 */
import type { inferRouterOutputs } from "@trpc/server";
import { z } from "zod";
import type { AppRouter } from "@/server/root";
import { browserIntents } from "../../_keyed/intents";
import { createRunner, IDLE as IDLE_STATE, type IntentFactory, type RunState } from "../../_keyed/runner";
import { type Answers, type SendDeps, sendWithRetries } from "../../_keyed/send";
import type { FailedCall } from "../../_keyed/trpc-attempt";

export const ZSettleInput = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("capture"),
    paymentId: z.string().min(1),
    amountMinor: z.number().int().positive(),
  }),
  z.object({ action: z.literal("cancel"), paymentId: z.string().min(1) }),
]);
export type TSettleInput = z.infer<typeof ZSettleInput>;

/** What `admin.payments.capture` and `.cancel` answer (and replay). */
export type TSettledPayment = inferRouterOutputs<AppRouter>["admin"]["payments"]["capture"];

export type SettleOutcome =
  | { kind: "succeeded"; payment: TSettledPayment }
  /** Another capture, cancel or the expiry won (or the payment is not authorized): `state` says which. */
  | { kind: "refused"; reason: string; state: string | null; message: string }
  | { kind: "signed_out"; message: string }
  | { kind: "rejected"; httpStatus: number; message: string }
  | { kind: "unconfirmed"; message: string };

export function settleRefusal({ status, message, text }: FailedCall): SettleOutcome {
  if (status === 401) {
    return {
      kind: "signed_out",
      message: "Your admin session ended. Sign in again: the action resumes with the same key.",
    };
  }
  // A refusal while the winner is still in progress comes with Retry-After and is retried.
  const reason = text("reason");
  if (reason !== null) {
    return {
      kind: "refused",
      reason,
      state: text("state"),
      message: message ?? "The payment cannot be settled.",
    };
  }
  return { kind: "rejected", httpStatus: status ?? 0, message: message ?? "The request was refused." };
}

const SETTLE_ANSWERS: Answers<TSettledPayment, SettleOutcome> = {
  succeeded: (payment) => ({ kind: "succeeded", payment }),
  refused: settleRefusal,
  unconfirmed: {
    kind: "unconfirmed",
    message: "Not confirmed yet. It is saved: this page goes on with it, same key, when reopened.",
  },
};

export type SettleState = RunState<TSettleInput, SettleOutcome>;
export const IDLE: SettleState = IDLE_STATE;

function answerStatus(outcome: SettleOutcome): number | undefined {
  if (outcome.kind === "succeeded") return 200;
  if (outcome.kind === "refused") return 409;
  return outcome.kind === "rejected" ? outcome.httpStatus : undefined;
}

export interface SettlerDeps extends Omit<SendDeps<TSettleInput, TSettledPayment>, "onProgress"> {
  storage(): Storage;
  intents?: IntentFactory;
}

export type Settler = ReturnType<typeof createSettler>;

/** Capture and cancel intents, at most one per payment at a time (see createRunner). */
export function createSettler(deps: SettlerDeps) {
  const runner = createRunner<TSettleInput, SettleOutcome>({
    store: browserIntents({ prefix: "admin:settle-intent:", request: ZSettleInput, storage: deps.storage }),
    scopeOf: (input) => input.paymentId,
    intents: deps.intents,
    run: (intent, onProgress) =>
      sendWithRetries({ ...deps, onProgress }, SETTLE_ANSWERS, intent.request, intent.key),
    answerStatus,
    failed: { kind: "unconfirmed", message: "Something went wrong while confirming it." },
  });
  return {
    getState: runner.getState,
    subscribe: runner.subscribe,
    resume: runner.resume,
    /** A press of Capture or Cancel: a new intent with a new key, unless this payment's is in flight. */
    settle: (input: TSettleInput) => runner.start(input),
  };
}
