import * as core from "@idempotent-checkout/idempotency";
import type { TRPCError } from "@trpc/server";
import { type Db, rawQuery, type Tx } from "../db";
import { errorField, logger } from "../log";

/**
 * The app's binding of @idempotent-checkout/idempotency: its database is the app's Prisma client,
 * the claim and the completion sent past the ORM on the client's own pool (`rawQuery`, named
 * statements), a phase's writes on Prisma's interactive transaction. Everything else of the app
 * uses the layer through this module, with the app's `Db` where the package takes a `KeyDb`.
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

export type KeyOwner = core.KeyOwner<Tx>;
export const KeyOwner = core.KeyOwner;
export type FirstPhase<TInput> = core.FirstPhase<TInput, Tx>;
export type IdempotencyHandle = core.IdempotencyHandle<Tx>;
/** What the layer reads of the app's context: its client, and a key its authentication read ahead. */
type KeyContext = { prisma: Db; principal?: { peekedKey?: core.PeekedKey | null } };
export type IdempotencyOptions<TInput> = Omit<
  core.IdempotencyOptions<TInput, Tx, KeyContext>,
  "database" | "peeked"
>;
export type AbandonedKey = core.AbandonedKey<Tx>;

/**
 * The layer's middleware on the context's Prisma client (`ctx.prisma`), with the key an API key's
 * authentication read ahead (`ctx.principal.peekedKey`): a replay of it sends no claim.
 */
export function idempotent<TInput>(options: IdempotencyOptions<TInput>) {
  return core.idempotent<TInput, Tx, KeyContext>({
    ...options,
    database: (ctx) => keyDb(ctx.prisma),
    peeked: (ctx) => ctx.principal?.peekedKey,
  });
}

export function runAsOwner<R extends { ok: true; data: unknown } | { ok: false; error: TRPCError }>(
  prisma: Db,
  owner: KeyOwner,
  leaseSeconds: number,
  run: () => Promise<R>,
  onSettled?: (outcome: core.Outcome) => void,
): Promise<R> {
  return core.runAsOwner(keyDb(prisma), owner, leaseSeconds, run, onSettled);
}

export const takeOverAbandoned = (
  prisma: Db,
  candidate: core.AbandonedCandidate,
  backoff?: core.RecoveryBackoff,
): Promise<AbandonedKey | null> => core.takeOverAbandoned(keyDb(prisma), candidate, backoff);

type DbFirst<F> = F extends (db: core.KeyDb<unknown>, ...rest: infer A) => infer R
  ? (prisma: Db, ...rest: A) => R
  : never;
function onPrisma<F extends (db: core.KeyDb<unknown>, ...rest: never[]) => unknown>(fn: F): DbFirst<F> {
  return ((prisma: Db, ...rest: never[]) => fn(keyDb(prisma), ...rest)) as DbFirst<F>;
}

export const findAbandonedKeys = onPrisma(core.findAbandonedKeys);
export const findUnfinishedKey = onPrisma(core.findUnfinishedKey);
export const abandonedKeyStats = onPrisma(core.abandonedKeyStats);
export const outcomeSeries = onPrisma(core.outcomeSeries);
export const outcomeTotals = onPrisma(core.outcomeTotals);
export const listKeys = onPrisma(core.listKeys);
export const findKey = onPrisma(core.findKey);
export const keyHistory = onPrisma(core.keyHistory);
export const countKeysByState = onPrisma(core.countKeysByState);
export const recordKeyEvent = onPrisma(core.recordKeyEvent);
export const sweepExpiredKeys = onPrisma(core.sweepExpiredKeys);

/** Flushes this process's outcome counts every few seconds; a failed flush is logged, and kept. */
export function startCounterFlush(prisma: Db, everyMs?: number): () => Promise<void> {
  return core.startCounterFlush(keyDb(prisma), {
    everyMs,
    onError: (error) => logger.warn({ job: "counters", err: errorField(error) }, "counter flush failed"),
  });
}

export {
  type AbandonedCandidate,
  backoffSeconds,
  type ClaimedKey,
  Cte,
  canonicalize,
  checkIdempotentCall,
  claimStatement,
  completionStatement,
  counters,
  DEFAULT_BACKOFF,
  deriveKey,
  ErrorDetails,
  empty,
  errorDetailsOf,
  FENCE_LOST,
  FIRST_PHASE_EMPTY,
  failedRequirement,
  fingerprint,
  firstPhaseKey,
  firstPhaseStatement,
  IDEMPOTENCY_DEFAULTS,
  type IdempotencyObservation,
  isErrorDetails,
  isLeaseLost,
  isRequirementFailure,
  isStoredReplay,
  join,
  KEY_STATES,
  type KeyDetail,
  type KeyEvent,
  type KeyListFilter,
  type KeyRef,
  type KeyState,
  type KeySummary,
  keyStateCondition,
  keyStateSql,
  LeaseLostError,
  MAX_KEY_LENGTH,
  maxAttemptSeconds,
  NEEDS_ATTENTION,
  OUTCOMES,
  type Outcome,
  type PeekedKey,
  parseIdempotencyKey,
  peekCompletedKey,
  pickFields,
  type RecoveryBackoff,
  type RequestObservation,
  type Requirement,
  RequirementFailedError,
  raw,
  replayable,
  requirement,
  type Sql,
  StatementBuilder,
  type StatementPart,
  type StatementWrites,
  StoredReplay,
  sql,
} from "@idempotent-checkout/idempotency";
