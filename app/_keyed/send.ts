import { type AttemptOptions, untilFinal } from "@idempotent-checkout/client/core";
import { type FailedCall, failedCall, trpcAttempt } from "./trpc-attempt";

export type { Progress } from "@idempotent-checkout/client/core";

/** One operation's request over tRPC, with the loop's clock, sleep, randomness and policy. */
export interface SendDeps<I, T> extends AttemptOptions {
  /** One request with the key as the Idempotency-Key header. */
  send(input: I, idempotencyKey: string, signal: AbortSignal): Promise<T>;
}

/** What an operation makes of its final answers. */
export interface Answers<T, O> {
  succeeded(value: T): O;
  /** A final failure (the client package's one list): the outcome it proves. */
  refused(failed: FailedCall): O;
  /** No final answer by the deadline: the outcome is unknown, so only the same key may go on. */
  unconfirmed: O;
}

/**
 * Sends `input` with the key until the answer is final or the deadline passes, through the
 * client package's loop and retry policy (decision 0140).
 */
export async function sendWithRetries<I, T, O>(
  deps: SendDeps<I, T>,
  answers: Answers<T, O>,
  input: I,
  idempotencyKey: string,
): Promise<O> {
  const settled = await untilFinal(
    (signal) => trpcAttempt(() => deps.send(input, idempotencyKey, signal)),
    deps,
  );
  if (settled.kind === "succeeded") return answers.succeeded(settled.value);
  if (settled.kind === "deadline") return answers.unconfirmed;
  return answers.refused(failedCall(settled.failure));
}
