import { TRPCClientError } from "@trpc/client";

/** A TRPCClientError as httpLink builds it from an error response. */
export function httpError(
  status: number,
  code: string,
  opts: { retryAfter?: string; details?: Record<string, unknown>; message?: string; path?: string } = {},
) {
  const response = new Response(null, {
    status,
    headers: opts.retryAfter ? { "Retry-After": opts.retryAfter } : {},
  });
  return TRPCClientError.from(
    {
      error: {
        message: opts.message ?? code,
        code: -32000,
        data: { code, httpStatus: status, path: opts.path ?? "payments.create", details: opts.details },
      },
    },
    { meta: { response } },
  );
}

/** What a failed fetch (offline, connection reset, aborted) becomes: no data, no response. */
export const networkError = () => TRPCClientError.from(new TypeError("Failed to fetch"));
