import { DEFAULT_RETRY_POLICY, type RetryPolicy, type RetryReason, retryDelay, verdictFor } from "./retry.js";

/**
 * One attempt as a transport reports it: a success's value, or a failure with its HTTP status
 * (undefined when there was no answer) and its `Retry-After`.
 */
export type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; status: number | undefined; retryAfterMs: number | undefined; error: unknown };

export type Failure = Extract<Attempt<unknown>, { ok: false }>;

export interface Progress {
  /** 1 for the first attempt, then one more for each retry. */
  attempt: number;
  /** Set while the loop waits to retry after `attempt` failed. */
  retry?: { reason: RetryReason; waitMs: number };
}

export interface AttemptOptions {
  policy?: Partial<RetryPolicy>;
  /** Whether an attempt without an answer may be sent again (false for a POST without a key). */
  retryUnanswered?: boolean;
  sleep?(ms: number): Promise<void>;
  now?(): number;
  /** In [0, 1): the jitter's source. */
  random?(): number;
  onProgress?(progress: Progress): void;
}

/** How the loop ended: a success, a final failure, or the deadline with the last failure. */
export type Settled<T> =
  | { kind: "succeeded"; value: T }
  | { kind: "final"; failure: Failure }
  | { kind: "deadline"; failure: Failure; attempts: number };

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Sends `attempt` (each with the same key, which the transport holds) until its answer is final
 * or the next wait would pass the deadline. Never throws for an answer; a transport that throws
 * is a bug and its error propagates.
 */
export async function untilFinal<T>(
  attempt: (signal: AbortSignal) => Promise<Attempt<T>>,
  options: AttemptOptions = {},
): Promise<Settled<T>> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  const now = options.now ?? Date.now;
  const deadline = now() + policy.deadlineMs;
  for (let retry = 0; ; retry++) {
    options.onProgress?.({ attempt: retry + 1 });
    const timeout = Math.max(1, Math.min(policy.attemptTimeoutMs, deadline - now()));
    const result = await attempt(AbortSignal.timeout(timeout));
    if (result.ok) return { kind: "succeeded", value: result.value };
    const verdict = verdictFor(result.status, result.retryAfterMs);
    if (!verdict.retry || (result.status === undefined && options.retryUnanswered === false))
      return { kind: "final", failure: result };
    const waitMs = retryDelay(retry, verdict.retryAfterMs, policy, options.random);
    if (now() + waitMs >= deadline) return { kind: "deadline", failure: result, attempts: retry + 1 };
    options.onProgress?.({ attempt: retry + 1, retry: { reason: verdict.reason, waitMs } });
    await (options.sleep ?? wait)(waitMs);
  }
}
