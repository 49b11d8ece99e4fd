/**
 * When to try again and how long to wait, as the server asks (decision 0140): no answer, 429, 5xx,
 * and a 409 or 422 with `Retry-After` (the key's first request is still running; a refund that
 * may fit once another one settles) are retried; every other answer is final. Waits grow
 * exponentially with full jitter (AWS's "Exponential Backoff and Jitter"), never shorter than
 * `Retry-After`, and all of it within one deadline. The browser and the SDK share this file.
 */
export interface RetryPolicy {
  /** The first wait's ceiling; each retry doubles it. */
  baseDelayMs: number;
  /** No wait's ceiling grows beyond this. */
  maxDelayMs: number;
  /** From the first attempt to giving up, waits and attempts included. */
  deadlineMs: number;
  /** One attempt's limit (a hung connection counts as no answer). */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  deadlineMs: 90_000,
  attemptTimeoutMs: 15_000,
};

/** Why a retry waits: no answer, the server failed or throttled, or our key is still running. */
export type RetryReason = "network" | "server" | "in_flight";

export type Verdict =
  | { retry: false }
  | { retry: true; reason: RetryReason; retryAfterMs: number | undefined };

/**
 * Whether an answer may be sent again with the same key; `status` undefined is no answer (refused,
 * reset, timed out, unreadable). The one list of final answers: everything not retried here.
 */
export function verdictFor(status: number | undefined, retryAfterMs: number | undefined): Verdict {
  if (status === undefined) return { retry: true, reason: "network", retryAfterMs };
  if (status === 429 || status >= 500) return { retry: true, reason: "server", retryAfterMs };
  // Without Retry-After a 409 is stored (another key paid the order) and a 422 is the refusal itself.
  if ((status === 409 || status === 422) && retryAfterMs !== undefined)
    return { retry: true, reason: "in_flight", retryAfterMs };
  return { retry: false };
}

/** `Retry-After` as delta-seconds or an HTTP date (RFC 9110 section 10.2.3), in milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null) return undefined;
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
