/**
 * The retry loop of one payment intent: every attempt carries the same Idempotency-Key, so the
 * server runs the payment at most once and answers retries with the stored outcome.
 * Plain TypeScript with its clock, sleep and randomness injected, so it is tested without a browser.
 */

export interface TPaymentInput {
  orderId: string;
  paymentMethod: string;
}

/** What `payments.create` answers (and replays). Amounts are integer minor units. */
export interface TPayment {
  id: string;
  orderId: string;
  amount: number;
  currency: string;
  status: "pending" | "succeeded" | "declined" | "failed";
  providerChargeId: string | null;
}

export type PaymentOutcome =
  | { kind: "succeeded"; payment: TPayment }
  /** The card (or the provider) refused: definitive for this intent; another card is a new intent. */
  | { kind: "declined"; paymentId: string | null; message: string }
  /** Another intent (another tab, another key) holds the order's payment. */
  | { kind: "already_paid"; paymentId: string | null; paymentStatus: string | null }
  /** The session ended before the key was used: signing in again and coming back resumes it. */
  | { kind: "signed_out"; message: string }
  /** Any other 4xx: a request the server will never accept; retrying cannot help. */
  | { kind: "rejected"; httpStatus: number | null; message: string }
  /** Still no answer when the retry budget ran out: the outcome is unknown, so only the same key may go on. */
  | { kind: "unconfirmed"; message: string };

export interface PaymentProgress {
  /** 1 for the first request, then one more for each retry. */
  attempt: number;
  /** Set once a request failed without an outcome and the loop is waiting to retry. */
  retry?: { reason: "network" | "server" | "in_flight"; waitMs: number };
}

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

export interface PayDeps {
  /** One request: `payments.create` with the key as the Idempotency-Key header. */
  send(input: TPaymentInput, idempotencyKey: string, signal: AbortSignal): Promise<TPayment>;
  sleep(ms: number): Promise<void>;
  now(): number;
  /** In [0, 1); the jitter's source. */
  random(): number;
  onProgress?(progress: PaymentProgress): void;
  policy?: Partial<RetryPolicy>;
}

export async function payWithRetries(
  deps: PayDeps,
  input: TPaymentInput,
  idempotencyKey: string,
): Promise<PaymentOutcome> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...deps.policy };
  const startedAt = deps.now();
  let transientFailures = 0;
  for (let attempt = 1; ; attempt++) {
    deps.onProgress?.({ attempt });
    let verdict: Verdict;
    try {
      const payment = await deps.send(input, idempotencyKey, AbortSignal.timeout(policy.attemptTimeoutMs));
      return { kind: "succeeded", payment };
    } catch (error) {
      verdict = classifyFailure(error, deps.now());
    }
    if (verdict.kind === "stop") return verdict.outcome;

    let waitMs: number;
    if (verdict.retryAfterMs !== null) {
      waitMs = Math.min(verdict.retryAfterMs, policy.maxRetryAfterMs);
    } else {
      transientFailures++;
      waitMs = backoffDelayMs(transientFailures, policy, deps.random());
    }
    if (deps.now() + waitMs - startedAt > policy.giveUpAfterMs) {
      return {
        kind: "unconfirmed",
        message: "We could not confirm your payment yet. It is saved: check again in a moment.",
      };
    }
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

type Verdict =
  | { kind: "retry"; reason: "network" | "server" | "in_flight"; retryAfterMs: number | null }
  | { kind: "stop"; outcome: PaymentOutcome };

/** The parts of a TRPCClientError this loop reads; a network failure or timeout has no `data`. */
interface ClientErrorShape {
  message?: string;
  data?: { httpStatus?: number; code?: string; details?: Record<string, unknown> } | null;
  meta?: { response?: { headers: { get(name: string): string | null } } };
}

const NOTHING_CHARGED = new Set(["card_declined", "provider_refused", "payment_abandoned"]);

export function classifyFailure(error: unknown, now: number): Verdict {
  const e = (typeof error === "object" && error !== null ? error : {}) as ClientErrorShape;
  const status = e.data?.httpStatus;
  const retryAfterMs = parseRetryAfterMs(e.meta?.response?.headers.get("retry-after"), now);
  // No status: the request failed, timed out or its answer was unreadable (say, a proxy's HTML 502).
  if (typeof status !== "number") return { kind: "retry", reason: "network", retryAfterMs: null };
  if (status >= 500) return { kind: "retry", reason: "server", retryAfterMs };

  const details = e.data?.details ?? {};
  const text = (name: string) => (typeof details[name] === "string" ? (details[name] as string) : null);
  const message = e.message || "The payment was refused.";
  if (status === 409) {
    // With Retry-After: our key is in flight, or another key's payment of this order is still
    // pending (it may yet be declined). Without: another key has paid the order.
    if (retryAfterMs !== null) return { kind: "retry", reason: "in_flight", retryAfterMs };
    if (text("reason") === "order_already_paid") {
      return {
        kind: "stop",
        outcome: { kind: "already_paid", paymentId: text("paymentId"), paymentStatus: text("paymentStatus") },
      };
    }
  }
  // "Nothing was charged" is shown for these alone: the provider's decline or definite refusal,
  // or our durable record that no charge request ever left (an abandoned payment).
  if (status === 402 && NOTHING_CHARGED.has(text("reason") ?? "")) {
    return { kind: "stop", outcome: { kind: "declined", paymentId: text("paymentId"), message } };
  }
  if (status === 401) {
    return {
      kind: "stop",
      outcome: { kind: "signed_out", message: "You are signed out. Sign in again to finish paying." },
    };
  }
  if (status === 422) {
    return {
      kind: "stop",
      outcome: {
        kind: "rejected",
        httpStatus: status,
        message:
          "This payment attempt clashed with an earlier one (its key was already used for a different request), so it was not processed. Press Pay to start a new attempt.",
      },
    };
  }
  return { kind: "stop", outcome: { kind: "rejected", httpStatus: status, message } };
}
