import { type CheckoutError, checkoutError, isProblem, problemCode } from "./errors.js";
import { type RetryPolicy, retryDelay, type Verdict, verdictFor } from "./retry.js";

/** One HTTP answer, as openapi-fetch hands it over. */
export type Answer<T> = { data?: T; error?: unknown; response: Response };

export interface AttemptOptions {
  policy: RetryPolicy;
  /** Whether an attempt that got no answer may be sent again (false for a POST without a key). */
  retryUnanswered: boolean;
  intentId?: string;
  random?: () => number;
  /** Called once the answer is final, before it is returned or thrown (the intent is forgotten here). */
  onFinal?: () => Promise<void>;
}

/**
 * Sends `attempt` until an answer is final or the deadline passes. A final answer's error, or
 * `deadline-exceeded` carrying the last failure, is thrown as a CheckoutError.
 */
export async function untilFinal<T>(
  attempt: (signal: AbortSignal) => Promise<Answer<T>>,
  options: AttemptOptions,
): Promise<{ data: T; response: Response }> {
  const { policy, intentId } = options;
  const deadline = Date.now() + policy.deadlineMs;
  let last: CheckoutError | undefined;
  for (let retry = 0; ; retry++) {
    let retryAfterMs: number | undefined;
    const remaining = deadline - Date.now();
    let answer: Answer<T> | undefined;
    try {
      answer = await attempt(AbortSignal.timeout(Math.max(1, Math.min(policy.attemptTimeoutMs, remaining))));
    } catch (error) {
      // No answer (refused, reset, timed out, a body cut short): the request may or may not have run.
      last = checkoutError("network-error", `No answer: ${describe(error)}`, {
        intentId,
        final: false,
        cause: error,
      });
      if (!options.retryUnanswered) throw last;
    }
    if (answer) {
      const { response } = answer;
      if (response.ok && answer.data !== undefined) {
        await options.onFinal?.();
        return { data: answer.data, response };
      }
      // A success without its body (a proxy's doing) tells nothing: ask again with the same key.
      const verdict: Verdict = response.ok
        ? { retry: true, retryAfterMs: undefined }
        : verdictFor(response.status, response.headers);
      last = errorFromAnswer(response.status, answer.error, intentId, !verdict.retry);
      if (!verdict.retry) {
        await options.onFinal?.();
        throw last;
      }
      retryAfterMs = verdict.retryAfterMs;
    }
    if (!last) throw new Error("unreachable: an attempt ended without an answer or an error");
    const wait = retryDelay(retry, retryAfterMs, policy, options.random);
    if (Date.now() + wait >= deadline)
      throw checkoutError(
        "deadline-exceeded",
        `No final answer within ${policy.deadlineMs} ms (${retry + 1} attempts; last: ${last.message})`,
        { status: last.status, problem: last.problem, intentId, final: false, cause: last },
      );
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

function errorFromAnswer(status: number, body: unknown, intentId: string | undefined, final: boolean) {
  if (isProblem(body))
    return checkoutError(problemCode(body), body.detail || body.title, {
      status,
      problem: body,
      intentId,
      final,
    });
  return checkoutError("http-error", `HTTP ${status}`, { status, intentId, final });
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error.message}${cause}`;
}
