export type ProviderErrorKind = "unavailable" | "timeout" | "conflict" | "rejected" | "pending";

// Next bundles this module once per layer, and the adapter may be built by another layer than
// the one that catches its errors: their kind is told by this brand, never by class identity.
const PROVIDER_ERROR = Symbol.for("idempotent-checkout.ProviderError");

/** A ProviderError from any copy of this module. */
export function isProviderError(value: unknown): value is ProviderError {
  return typeof value === "object" && value !== null && PROVIDER_ERROR in value;
}

/**
 * - unavailable: no answer (refused, reset, unreadable), a 5xx or a 429. The payment may or may
 *   not exist: retry with the SAME idempotency key.
 * - timeout: no answer in time; same ambiguity as unavailable.
 * - conflict: 409, a request with this key is still in flight; retry after `retryAfterMs`.
 * - pending: the provider answered, and the payment is not final (it awaits the customer's
 *   authentication, or processing): nothing was refused; ask again later with the same key.
 * - rejected: a 4xx that is an answer (bad input, a key reused with other parameters, auth, a
 *   refund the payment cannot take); do not retry as is. `code` (and `param`) say which.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  readonly [PROVIDER_ERROR] = true;
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly status?: number;
  /** The provider's error code when it sent one, e.g. "resource_missing", "amount_too_large". */
  readonly code?: string;
  /** The parameter the provider named, e.g. "payment_method" for an unknown payment method. */
  readonly param?: string;
  /** From Retry-After, when the provider sent it. */
  readonly retryAfterMs?: number;
  /**
   * False only with proof that no byte of the request reached the provider (every connection the
   * SDK tried for it was refused, or the host not found); otherwise it may have been acted on.
   */
  readonly requestMayHaveLeft: boolean;

  constructor(
    message: string,
    details: {
      kind: ProviderErrorKind;
      status?: number;
      code?: string;
      param?: string;
      retryAfterMs?: number;
      cause?: unknown;
      requestMayHaveLeft?: boolean;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = details.kind;
    this.retryable = details.kind !== "rejected";
    this.requestMayHaveLeft = details.requestMayHaveLeft ?? true;
    if (details.status !== undefined) this.status = details.status;
    if (details.code !== undefined) this.code = details.code;
    if (details.param !== undefined) this.param = details.param;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}
