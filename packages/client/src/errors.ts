import type { Problem } from "./intents.js";

/** The slug of each problem type the API documents (`card-declined`, `rate-limited`, …). */
export type ApiProblemCode = Problem["type"] extends infer T
  ? T extends `${string}#${infer Slug}`
    ? Slug
    : never
  : never;

/**
 * Why a call failed. Problem types of the API keep their slug (`card-declined`,
 * `idempotency-key-reused`, …); `about:blank` answers are `http-<status>`; the client adds its own:
 * - `deadline-exceeded`: retries ran out of time; the outcome is unknown and the intent is kept
 *   without an answer, so `resume()` (or the same call with the same intent id) finishes it with
 *   the same key;
 * - `intent-conflict`: the store already holds this intent id for another request;
 * - `network-error`: no answer at all (the attempt is retried);
 * - `http-error`: an answer that was not a problem document (a proxy's page, say).
 */
export type CheckoutErrorCode =
  | ApiProblemCode
  | `http-${number}`
  | "deadline-exceeded"
  | "intent-conflict"
  | "network-error"
  | "http-error";

/** Marks the client's errors across copies of this module (two bundles, two versions). */
const BRAND = Symbol.for("@idempotent-checkout/client.error");

export interface CheckoutError extends Error {
  readonly name: "CheckoutError";
  readonly code: CheckoutErrorCode;
  /** The HTTP status of the last answer, when there was one. */
  readonly status: number | undefined;
  /** The API's problem document (RFC 9457), with its extension members (`paymentId`, …). */
  readonly problem: Problem | undefined;
  readonly intentId: string | undefined;
  /** True when the answer is final: it is kept with the intent (and answered again) until `forget`. */
  readonly final: boolean;
}

export function checkoutError(
  code: CheckoutErrorCode,
  message: string,
  fields: { status?: number; problem?: Problem; intentId?: string; final: boolean; cause?: unknown },
): CheckoutError {
  const error = new Error(message, fields.cause === undefined ? undefined : { cause: fields.cause });
  return Object.assign(error, {
    name: "CheckoutError" as const,
    code,
    status: fields.status,
    problem: fields.problem,
    intentId: fields.intentId,
    final: fields.final,
    [BRAND]: true,
  });
}

/** By brand, not `instanceof`: the error may come from another copy of this package. */
export function isCheckoutError(value: unknown): value is CheckoutError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** The slug of a problem type such as `/docs/problems#card-declined`. */
export function problemCode(problem: Problem): CheckoutErrorCode {
  if (problem.type === "about:blank") return `http-${problem.status}`;
  // A newer server may answer a type this version does not know: its slug all the same.
  return problem.type.slice(problem.type.lastIndexOf("#") + 1) as ApiProblemCode;
}

export function isProblem(body: unknown): body is Problem {
  const p = body as Partial<Problem> | null;
  return typeof p === "object" && p !== null && typeof p.type === "string" && typeof p.status === "number";
}
