/**
 * When to try again and how long to wait, as the server asks: network errors, 409 with
 * `Retry-After` (the key's first request is still running), 429 and 5xx are retried; every other
 * answer is final. Waits grow exponentially with full jitter (AWS's "Exponential Backoff and
 * Jitter"), never shorter than `Retry-After`, and all of it within one deadline.
 */
export interface RetryPolicy {
  /** The first wait's ceiling; each retry doubles it. */
  baseDelayMs: number;
  /** No wait's ceiling grows beyond this. */
  maxDelayMs: number;
  /** From the first attempt to giving up, waits and attempts included. */
  deadlineMs: number;
  /** One attempt's limit (a hung connection counts as a network error). */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  deadlineMs: 60_000,
  attemptTimeoutMs: 15_000,
};

export type Verdict = { retry: false } | { retry: true; retryAfterMs: number | undefined };

/** Whether an HTTP answer may be retried with the same key. */
export function verdictFor(status: number, headers: Headers, now = Date.now()): Verdict {
  const retryAfterMs = parseRetryAfter(headers.get("retry-after"), now);
  // 409 without Retry-After is a stored outcome (another key already paid the order): final.
  const retryable = status === 429 || status >= 500 || (status === 409 && retryAfterMs !== undefined);
  return retryable ? { retry: true, retryAfterMs } : { retry: false };
}

/** `Retry-After` as delta-seconds or an HTTP date (RFC 9110 section 10.2.3), in milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its weekday and month; Date.parse alone would also take "-1" or "2026".
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `retry` (0 for the first): a uniform draw from zero to the
 * exponential ceiling ("full jitter"), raised to what the server asked for.
 */
export function retryDelay(
  retry: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.max(retryAfterMs ?? 0, Math.floor(random() * ceiling));
}
