/**
 * The retry loop of one intent: every attempt carries the same Idempotency-Key, so the server
 * runs the operation at most once and answers retries with the stored outcome. Network failures
 * and 5xx are retried with backoff, a 409 with Retry-After after that wait; what an answer means
 * otherwise is the operation's own `classify`. Plain TypeScript with its clock, sleep and
 * randomness injected, so it is tested without a browser.
 */

export interface Progress {
  /** 1 for the first request, then one more for each retry. */
  attempt: number;
  /** Set once a request failed without an outcome and the loop is waiting to retry. */
  retry?: { reason: RetryReason; waitMs: number };
}

export type RetryReason = "network" | "server" | "in_flight";

export interface RetryPolicy {
  /** First backoff after a network failure or 5xx; doubles after each one. */
  baseDelayMs: number;
  /** Backoff cap, before jitter. */
  maxDelayMs: number;
  /** An attempt with no answer by then is aborted and counts as a network failure. */
  attemptTimeoutMs: number;
  /** A Retry-After longer than this is shortened to it. */
  maxRetryAfterMs: number;
  /** No new attempt starts after this long; the intent stays unfinished for a later resume. */
  giveUpAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  attemptTimeoutMs: 15_000,
  maxRetryAfterMs: 30_000,
  giveUpAfterMs: 90_000,
};

export interface RetryDeps<I, R> {
  /** One request with the key as the Idempotency-Key header. */
  send(input: I, idempotencyKey: string, signal: AbortSignal): Promise<R>;
  sleep(ms: number): Promise<void>;
  now(): number;
  /** In [0, 1); the jitter's source. */
  random(): number;
  onProgress?(progress: Progress): void;
  policy?: Partial<RetryPolicy>;
}

export type Verdict<O> =
  | { kind: "retry"; reason: RetryReason; retryAfterMs: number | null }
  | { kind: "stop"; outcome: O };

/** What an operation makes of its answers. */
export interface Answers<R, O> {
  succeeded(result: R): O;
  /** A failed request: retry, or the outcome it proves. */
  classify(error: unknown, now: number): Verdict<O>;
  /** Still no answer when the retry budget ran out: only the same key may go on. */
  unconfirmed: O;
}

export async function sendWithRetries<I, R, O>(
  deps: RetryDeps<I, R>,
  answers: Answers<R, O>,
  input: I,
  idempotencyKey: string,
): Promise<O> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...deps.policy };
  const startedAt = deps.now();
  let transientFailures = 0;
  for (let attempt = 1; ; attempt++) {
    deps.onProgress?.({ attempt });
    let verdict: Verdict<O>;
    try {
      const result = await deps.send(input, idempotencyKey, AbortSignal.timeout(policy.attemptTimeoutMs));
      return answers.succeeded(result);
    } catch (error) {
      verdict = answers.classify(error, deps.now());
    }
    if (verdict.kind === "stop") return verdict.outcome;

    let waitMs: number;
    if (verdict.retryAfterMs !== null) {
      waitMs = Math.min(verdict.retryAfterMs, policy.maxRetryAfterMs);
    } else {
      transientFailures++;
      waitMs = backoffDelayMs(transientFailures, policy, deps.random());
    }
    if (deps.now() + waitMs - startedAt > policy.giveUpAfterMs) return answers.unconfirmed;
    deps.onProgress?.({ attempt, retry: { reason: verdict.reason, waitMs } });
    await deps.sleep(waitMs);
  }
}

/** Capped exponential backoff with "equal jitter": between half and all of the capped delay. */
export function backoffDelayMs(failures: number, policy: RetryPolicy, random: number): number {
  const capped = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failures - 1));
  return Math.round(capped / 2 + (random * capped) / 2);
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfterMs(value: string | null | undefined, now: number): number | null {
  if (value == null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates name their day or month; a bare "-1" must not parse as the year -1.
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The parts of a TRPCClientError the classifiers read; a network failure or timeout has no `data`. */
interface ClientErrorShape {
  message?: string;
  data?: { httpStatus?: number; code?: string; details?: Record<string, unknown> } | null;
  meta?: { response?: { headers: { get(name: string): string | null } } };
}

/** A failed tRPC call read: its status, Retry-After, message and `details` strings. */
export interface FailedCall {
  status: number;
  retryAfterMs: number | null;
  message: string | undefined;
  text(name: string): string | null;
  number(name: string): number | null;
}

/**
 * The part every operation shares: no status (the request failed, timed out, or its answer was
 * unreadable, say a proxy's HTML 502) and 5xx are retried; a 409 with Retry-After (our key in
 * flight) is retried after it. Anything else is handed to `decide`, which names the outcome, or
 * answers RETRY_AFTER for a refusal the server says may change (retried after its Retry-After).
 */
export const RETRY_AFTER = Symbol("retry after");

export function classifyWith<O>(decide: (failed: FailedCall) => O | typeof RETRY_AFTER) {
  return (error: unknown, now: number): Verdict<O> => {
    const e = (typeof error === "object" && error !== null ? error : {}) as ClientErrorShape;
    const status = e.data?.httpStatus;
    const retryAfterMs = parseRetryAfterMs(e.meta?.response?.headers.get("retry-after"), now);
    if (typeof status !== "number") return { kind: "retry", reason: "network", retryAfterMs: null };
    if (status >= 500) return { kind: "retry", reason: "server", retryAfterMs };
    if (status === 409 && retryAfterMs !== null) return { kind: "retry", reason: "in_flight", retryAfterMs };
    const details = e.data?.details ?? {};
    const outcome = decide({
      status,
      retryAfterMs,
      message: e.message || undefined,
      text: (name) => (typeof details[name] === "string" ? (details[name] as string) : null),
      number: (name) => (typeof details[name] === "number" ? (details[name] as number) : null),
    });
    if (outcome === RETRY_AFTER && retryAfterMs !== null)
      return { kind: "retry", reason: "in_flight", retryAfterMs };
    if (outcome === RETRY_AFTER) return { kind: "retry", reason: "server", retryAfterMs: null };
    return { kind: "stop", outcome };
  };
}
