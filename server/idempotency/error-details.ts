/**
 * What a handler's error tells the idempotency layer beyond its tRPC code: the extra fields of
 * the stored (and replayed) answer, and whether the outcome may still change. An error with
 * retryAfterSeconds is not stored: the key is held that long and the client told to retry.
 * The app's error formatter copies `details` to `error.data.details`.
 */
export class ErrorDetails extends Error {
  constructor(
    readonly details: Record<string, unknown>,
    /** Set when the outcome may change soon: not stored, and the client is told when to retry. */
    readonly retryAfterSeconds?: number,
  ) {
    super("error details");
  }
}
