import { type Attempt, type Failure, parseRetryAfter } from "@idempotent-checkout/client/core";

/** The parts of a TRPCClientError read here; a network failure or timeout has no `data`. */
interface ClientErrorShape {
  message?: string;
  data?: { httpStatus?: number; details?: Record<string, unknown> } | null;
  meta?: { response?: { headers: { get(name: string): string | null } } };
}

const shapeOf = (error: unknown) =>
  (typeof error === "object" && error !== null ? error : {}) as ClientErrorShape;

/**
 * One tRPC call as an attempt of the client package's loop: its value, or its HTTP status and
 * `Retry-After` (no status: the request failed, timed out, or its answer was unreadable, say a
 * proxy's HTML 502).
 */
export async function trpcAttempt<T>(call: () => Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    const e = shapeOf(error);
    const status = e.data?.httpStatus;
    return {
      ok: false,
      status: typeof status === "number" ? status : undefined,
      retryAfterMs: parseRetryAfter(e.meta?.response?.headers.get("retry-after")),
      error,
    };
  }
}

/** A final failure read: its status, message and `details` fields. */
export interface FailedCall {
  status: number | undefined;
  message: string | undefined;
  text(name: string): string | null;
  number(name: string): number | null;
}

export function failedCall(failure: Failure): FailedCall {
  const e = shapeOf(failure.error);
  const details = e.data?.details ?? {};
  return {
    status: failure.status,
    message: e.message || undefined,
    text: (name) => (typeof details[name] === "string" ? (details[name] as string) : null),
    number: (name) => (typeof details[name] === "number" ? (details[name] as number) : null),
  };
}
