import { brandGuard } from "./brand.js";

const ERROR_DETAILS = Symbol.for("idempotent-checkout.idempotency.ErrorDetails");

/**
 * What a handler's error tells the idempotency layer beyond its tRPC code: the extra fields of
 * the stored (and replayed) answer, and whether the outcome may still change. An error with
 * retryAfterSeconds is not stored: the client is told to retry after it, and (below 500) the key is
 * held that long.
 * The app's error formatter copies `details` to `error.data.details`.
 */
export class ErrorDetails extends Error {
  readonly [ERROR_DETAILS] = true;
  constructor(
    readonly details: Record<string, unknown>,
    /** Set when the outcome may change soon: not stored, and the client is told when to retry. */
    readonly retryAfterSeconds?: number,
  ) {
    super("error details");
  }
}

export const isErrorDetails = brandGuard<ErrorDetails>(ERROR_DETAILS);

/** The ErrorDetails an error carries as its cause, from whichever copy of this module made it. */
export function errorDetailsOf(error: { cause?: unknown }): ErrorDetails | undefined {
  return isErrorDetails(error.cause) ? error.cause : undefined;
}
