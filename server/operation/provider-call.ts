import { LeaseLostError } from "@idempotent-checkout/idempotency";
import { raw, sql } from "@idempotent-checkout/idempotency/sql";
import type { TRPCError } from "@trpc/server";
import { type Db, rawQuery } from "../db";
import { domainErrors } from "../errors";
import { isProviderError, type ProviderError } from "../provider";

/** An operation's row and its durable "a request may have left" mark (null: none ever left). */
export interface MarkedRow {
  id: string;
  requestedAt: string | null;
}

/**
 * Where an operation keeps that mark. The table's rows are `pending` until settled, and the mark
 * is a timestamptz column; both names are the operation's own constants, never a caller's input.
 */
export interface RequestMark {
  table: "payments" | "refunds" | "authorization_actions";
  column: "charge_requested_at" | "refund_requested_at" | "action_requested_at";
}

/** How an operation reads its provider's answers: where its mark is, and what they mean. */
export interface ProviderTerms {
  mark: RequestMark;
  /** Whether a provider's refusal proves this request can never succeed, whatever earlier attempts did. */
  definiteRefusal: (refusal: { code: string; param?: string | undefined }) => boolean;
  /** The operation's answer to the provider's own "in flight" (the client comes back later). */
  inFlight: (retryAfterSeconds: number) => TRPCError;
}

export type ProviderOutcome<T> = { made: T } | { refused: string; code: string };

/**
 * Phase 2 of a keyed operation: the provider call, after a durable mark that a request may be out
 * (for a fresh operation, committed with its creation). A definite refusal is an outcome; any other
 * failure is an unknown outcome, answered as retryable, and when the request provably never left
 * (connection refused) the mark is taken back.
 */
export async function callProvider<T>(
  prisma: Db,
  terms: ProviderTerms,
  /** The row; `resumed`: an attempt after a takeover marks again before it re-sends. */
  attempt: MarkedRow & { resumed: boolean },
  send: () => Promise<T>,
): Promise<ProviderOutcome<T>> {
  // A fresh attempt's mark was written with its row (nothing before it); a resumed one marks anew.
  const was = attempt.resumed
    ? { previous: attempt.requestedAt, mine: await markRequest(prisma, terms.mark, attempt.id) }
    : { previous: null, mine: attempt.requestedAt };
  try {
    return { made: await send() };
  } catch (error) {
    if (!isProviderError(error)) throw error;
    if (
      error.kind === "rejected" &&
      error.code &&
      terms.definiteRefusal({ code: error.code, param: error.param })
    )
      return { refused: error.message, code: error.code };
    if (!error.requestMayHaveLeft) await unmarkRequest(prisma, terms.mark, attempt.id, was);
    throw providerFailure(error, terms.inFlight);
  }
}

/**
 * A provider failure as the client's answer: its own "in flight", and a payment it has not finished
 * (awaiting the customer's authentication, processing), are "in flight" for us too; anything else is
 * unavailable; either way the client is told when to come back (the provider's Retry-After, else 1 s).
 */
export function providerFailure(error: ProviderError, inFlight: (retryAfterSeconds: number) => TRPCError) {
  const retryAfterSeconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
  return error.kind === "conflict" || error.kind === "pending"
    ? inFlight(retryAfterSeconds)
    : domainErrors.providerUnavailable(error.kind, retryAfterSeconds);
}

/** Runs a read of the provider; its failures become the client's retryable answers. */
export async function askProvider<T>(
  ask: () => Promise<T>,
  inFlight: (retryAfterSeconds: number) => TRPCError,
): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (isProviderError(error)) throw providerFailure(error, inFlight);
    throw error;
  }
}

const names = (m: RequestMark) => ({ table: raw(m.table), column: raw(m.column) });

/** Commits "a request may be out since now" (the database's now) before a re-send. */
async function markRequest(prisma: Db, mark: RequestMark, id: string): Promise<string> {
  const { table, column } = names(mark);
  const [row] = await rawQuery<{ mine: Date }>(
    prisma,
    sql`UPDATE ${table} SET ${column} = now() WHERE id = ${id}::uuid AND status = 'pending' RETURNING ${column} AS mine`,
  );
  // Settled meanwhile by another attempt that took our key over: this one's writes are fenced.
  if (!row) throw new LeaseLostError();
  return new Date(row.mine).toISOString();
}

/** The request never left: the mark goes back to what it was, unless another attempt marked since. */
async function unmarkRequest(
  prisma: Db,
  mark: RequestMark,
  id: string,
  was: { previous: string | null; mine: string | null },
) {
  if (was.mine === null) return;
  const { table, column } = names(mark);
  await rawQuery(
    prisma,
    sql`UPDATE ${table} SET ${column} = ${was.previous}::timestamptz
         WHERE id = ${id}::uuid AND status = 'pending' AND ${column} = ${was.mine}::timestamptz`,
  );
}
