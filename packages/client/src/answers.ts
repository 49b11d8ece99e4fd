import type { Attempt, Failure } from "./core/attempts.js";
import { parseRetryAfter } from "./core/retry.js";
import { type CheckoutError, checkoutError, isProblem, problemCode } from "./errors.js";

/** One HTTP answer, as openapi-fetch hands it over. */
type Answer<T> = { data?: T; error?: unknown; response: Response };

export type Received<T> = { data: T; replayed: boolean };

/** An openapi-fetch call as one attempt of the core's loop; a thrown fetch is no answer. */
export async function attemptOf<T>(send: () => Promise<Answer<T>>): Promise<Attempt<Received<T>>> {
  let answer: Answer<T>;
  try {
    answer = await send();
  } catch (error) {
    return { ok: false, status: undefined, retryAfterMs: undefined, error };
  }
  const { response } = answer;
  const replayed = response.headers.get("idempotent-replayed") === "true";
  if (response.ok && answer.data !== undefined) return { ok: true, value: { data: answer.data, replayed } };
  // A success without its body (a proxy's doing) tells nothing: no answer, asked again with the same key.
  if (response.ok) return { ok: false, status: undefined, retryAfterMs: undefined, error: undefined };
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  return { ok: false, status: response.status, retryAfterMs, error: answer.error };
}

/** The CheckoutError of a failed attempt (or of a refusal kept with its intent). */
export function errorOf(
  failure: Pick<Failure, "status" | "error">,
  intentId: string | undefined,
  final: boolean,
) {
  const { status, error } = failure;
  if (status === undefined)
    return checkoutError("network-error", `No answer: ${describe(error)}`, { intentId, final, cause: error });
  if (isProblem(error))
    return checkoutError(problemCode(error), error.detail || error.title, {
      status,
      problem: error,
      intentId,
      final,
    });
  return checkoutError("http-error", `HTTP ${status}`, { status, intentId, final });
}

export function deadlineError(last: CheckoutError, deadlineMs: number, attempts: number, intentId?: string) {
  return checkoutError(
    "deadline-exceeded",
    `No final answer within ${deadlineMs} ms (${attempts} attempts; last: ${last.message})`,
    { status: last.status, problem: last.problem, intentId, final: false, cause: last },
  );
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return error === undefined ? "a success without a body" : String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error.message}${cause}`;
}
