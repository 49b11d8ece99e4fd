/**
 * Extra fields a domain error puts in the response body (for example the existing payment's id
 * on "order already paid"). The tRPC error formatter copies them to `error.data.details`.
 */
export class ErrorDetails extends Error {
  constructor(readonly details: Record<string, unknown>) {
    super("error details");
  }
}
