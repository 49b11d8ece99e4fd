/**
 * The most calls one tRPC batch (`?batch=1`) may carry. Each call is a query or a non-idempotent
 * mutation run in turn by one request, so the cap bounds the work one request can demand.
 * Shared with the browser's batch link, which never sends more.
 */
export const MAX_BATCH_CALLS = 10;
