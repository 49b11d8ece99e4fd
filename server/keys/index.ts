import * as core from "@idempotent-checkout/idempotency";
import type { PeekedKey } from "@idempotent-checkout/idempotency/sql";
import { type Db, rawQuery, type Tx } from "../db";
import { errorField, logger } from "../log";

/**
 * The app's binding of @idempotent-checkout/idempotency: its database is the app's Prisma client,
 * the claim and the completion sent past the ORM on the client's own pool (`rawQuery`, named
 * statements), a phase's writes on Prisma's interactive transaction; its failures go to the log.
 */
const bound = new WeakMap<Db, core.KeyDb<Tx>>();

export function keyDb(prisma: Db): core.KeyDb<Tx> {
  let found = bound.get(prisma);
  if (!found) {
    found = {
      query: (statement) => rawQuery(prisma, statement),
      execute: (statement) => prisma.$executeRawUnsafe(statement.text, ...statement.values),
      transaction: (fn, { timeoutMs }) => prisma.$transaction(fn, { timeout: timeoutMs }),
      queryIn: (tx, statement) => tx.$queryRawUnsafe(statement.text, ...statement.values),
    };
    bound.set(prisma, found);
  }
  return found;
}

/** What the layer reads of the app's context: its client, and a key its authentication read ahead. */
type KeyContext = { prisma: Db; principal: { peekedKey?: PeekedKey | null } };

export const idempotency = core.createIdempotency<Db, Tx, KeyContext>({
  db: (ctx) => ctx.prisma,
  keyDb,
  peeked: (ctx) => ctx.principal.peekedKey,
  onError: (error, { job, keyId }) =>
    logger.warn(
      { job, keyId: keyId === undefined ? undefined : String(keyId), err: errorField(error) },
      `${job} failed`,
    ),
});

export type KeyOwner = core.KeyOwner<Tx>;
export type FirstPhase<TInput> = core.FirstPhase<TInput, Tx>;
export type ProcedureOptions<TInput> = core.ProcedureOptions<TInput, Tx>;
export type Driver = core.Driver<Tx>;
export type AbandonedKey = Parameters<Driver["execute"]>[0];
export type { RecoveryBackoff, RequestObservation } from "@idempotent-checkout/idempotency";
export { IDEMPOTENCY_DEFAULTS } from "@idempotent-checkout/idempotency";
// The HTTP edges check the key header before a procedure runs.
export { checkIdempotentCall } from "@idempotent-checkout/idempotency/admin";
/** Every process that serves requests flushes its outcome counts (instrumentation, the API tier). */
export const startCounterFlush = idempotency.startCounterFlush;
