import { getTRPCErrorFromUnknown, TRPCError } from "@trpc/server";
import { brandGuard } from "./brand.js";
import { counters, type Outcome } from "./counters.js";
import type { KeyDb } from "./db.js";
import { ErrorDetails, errorDetailsOf } from "./error-details.js";
import { fingerprint, pickFields } from "./fingerprint.js";
import { startHeartbeat } from "./heartbeat.js";
import { isLeaseLost, KeyOwner, LeaseLostError, type StoredResponse, storedError } from "./owner.js";
import type { PeekedKey } from "./peek.js";
import { isRequirementFailure, type Sql, StatementBuilder } from "./sql.js";
import {
  type ClaimedKey,
  type ClaimParams,
  claimKey,
  completeKey,
  deleteExpiredKey,
  FIRST_PHASE_EMPTY,
  type FirstPhaseStatement,
  firstPhaseKey,
  type KeyRow,
  recordFenced,
  releaseKey,
  renewLease,
  takeOverKey,
  withdrawClaim,
} from "./store.js";

export interface IdempotencyOptions<TInput, TTx = unknown, TCtx = object> {
  /** The layer's database for a request: the app's adapter (see `KeyDb`), usually one per process. */
  database: (ctx: TCtx) => KeyDb<TTx>;
  /**
   * The procedure's identity, declared by its owner (for example "payments.create"): stored with
   * each key and part of the fingerprint, so it must stay the same when a router is renamed or
   * mounted elsewhere. A background completer finds its keys by it.
   */
  procedure: string;
  /** The input fields that define the operation; all of them when omitted. */
  fields?: readonly (keyof TInput & string)[];
  /** How long the key and its stored response are kept. Default 24 h. */
  ttlSeconds?: number;
  /** How long an attempt owns the key before a duplicate may take it over. Default 30 s. */
  leaseSeconds?: number;
  /** What a duplicate that finds the key in flight is told to wait. Default 1 s. */
  retryAfterSeconds?: number;
  /** Upper bound of each fenced business transaction. Default 15 s. */
  transactionTimeoutMs?: number;
  /**
   * The handler's first atomic phase, written into the claim statement so that a fresh key and
   * its first phase commit together in one round trip. When it writes nothing (its order is
   * gone, say) the claim rolls back and runs again without it; the handler then runs the phase
   * itself and decides the outcome. The handler reads the value with `phaseResult`.
   */
  firstPhase?: FirstPhase<TInput, TTx>;
  /**
   * Decides whether this new work may run at all (a rate limit, say), after the claim has told
   * new work from a replay, a 409 or a 422 (those cost nothing). It refuses by throwing; the
   * refusal is final for this request, so what the claim wrote is undone in one transaction
   * (the first phase through its `undo`, the key back to "started" and free) before the error
   * goes to the client: nothing is left that a retry, the completer or an operator would act on.
   * Should the lease run out while admitting and another attempt take the key, the answer is 409
   * with Retry-After instead: that attempt may be doing the work.
   */
  admit?: (ctx: { account: { id: string }; resHeaders: Headers }) => Promise<void>;
  /**
   * The request's key, when a statement the app sent anyway found it completed (`peekCompletedKey`
   * in the statement that authenticates the request, say). A replay of it then needs no claim:
   * same account, key and fingerprint, and it is answered as stored. Anything else claims as usual.
   */
  peeked?: (ctx: TCtx) => PeekedKey | null | undefined;
}

export interface FirstPhase<TInput, TTx = unknown> {
  recoveryPoint: string;
  /**
   * Adds the phase's CTEs to `b` (the claim statement's builder) and says when it is done and
   * what it returns. `key.isNew` holds only when the claim inserted the key: the phase's writes
   * must require it, for the statement also runs them when it finds an existing key.
   */
  statement(
    input: TInput,
    ctx: { account: { id: string } },
    key: ClaimedKey,
    b: StatementBuilder,
  ): {
    /** Must hold when the key was inserted, else the claim rolls back and runs without the phase. */
    done: Sql;
    /** The phase's value for the handler (`phaseResult`), as json. */
    result: Sql;
  };
  /**
   * Removes what the phase wrote with the claim of key `keyId`, in the transaction that frees the
   * key after a refusal (see `admit`). Runs only when the phase ran with this attempt's claim.
   */
  undo(tx: TTx, keyId: bigint): Promise<unknown>;
}

export const IDEMPOTENCY_DEFAULTS = {
  ttlSeconds: 24 * 60 * 60,
  leaseSeconds: 30,
  retryAfterSeconds: 1,
  transactionTimeoutMs: 15_000,
} as const;

/** The key's part of a request's log line: its row id and fence, and what became of the request. */
export interface IdempotencyObservation {
  keyId: string | null;
  fence: number | null;
  outcome: Outcome;
}
export interface RequestObservation {
  idempotency?: IdempotencyObservation;
}

interface RequiredContext {
  account: { id: string };
  idempotencyKey: string;
  resHeaders: Headers;
  observation?: RequestObservation;
}

const STORED_REPLAY = Symbol.for("idempotent-checkout.idempotency.StoredReplay");

/**
 * What the resolver gets on a replay of a stored success: the stored data and no owner. tRPC's
 * public middleware API cannot answer without calling the resolver, so the middleware hands the
 * stored answer down and `replayable` returns it without running the handler.
 */
export class StoredReplay {
  readonly [STORED_REPLAY] = true;
  taken = false;
  constructor(private readonly data: unknown) {}
  take(): unknown {
    this.taken = true;
    return this.data;
  }
}

/** ctx.idempotency in an idempotent resolver: the key's owner, or a replay to return as is. */
export type IdempotencyHandle<TTx = unknown> = KeyOwner<TTx> | StoredReplay;

export const isStoredReplay = brandGuard<StoredReplay>(STORED_REPLAY);

/**
 * Wraps an idempotent procedure's resolver: on a replay it returns the stored data without
 * running the handler; otherwise it runs the handler with the key's owner.
 */
// biome-ignore lint/suspicious/noExplicitAny: any transaction type; Owned keeps the caller's.
export function replayable<TOpts extends { ctx: { idempotency: IdempotencyHandle<any> } }, TOut>(
  handler: (opts: Owned<TOpts>) => TOut | Promise<TOut>,
): (opts: TOpts) => Promise<TOut> {
  return async (opts) => {
    const handle = opts.ctx.idempotency;
    if (isStoredReplay(handle)) return handle.take() as TOut;
    return handler(opts as unknown as Owned<TOpts>);
  };
}

/** The resolver's options with the key's owner in place of the handle. */
type Owned<TOpts extends { ctx: { idempotency: unknown } }> = Omit<TOpts, "ctx"> & {
  ctx: Omit<TOpts["ctx"], "idempotency"> & {
    idempotency: Exclude<TOpts["ctx"]["idempotency"], StoredReplay>;
  };
};

interface MiddlewareArgs<R, TTx, TCtx> {
  ctx: RequiredContext & TCtx;
  input: unknown;
  next: (opts: { ctx: { idempotency: IdempotencyHandle<TTx> } }) => Promise<R>;
}

type Seen = { keyId?: bigint; fence?: number };
type Decision =
  | { kind: "own"; row: KeyRow; fence: number; recoveryPoint: string }
  | ({ kind: "replay"; body: StoredResponse } & Seen)
  | ({ kind: "in_flight" } & Seen)
  | ({ kind: "mismatch" } & Seen);

/**
 * Makes a mutation idempotent per (account, Idempotency-Key): the first request claims the key
 * and runs; a duplicate is replayed (completed), told 409 (in flight) or 422 (another request);
 * a duplicate that finds the lease expired takes the key over and resumes from its recovery point.
 */
export function idempotent<TInput, TTx = unknown, TCtx = object>(
  options: IdempotencyOptions<TInput, TTx, TCtx>,
) {
  const o = { ...IDEMPOTENCY_DEFAULTS, ...options };
  return async function idempotencyMiddleware<R extends Settled>({
    ctx,
    input,
    next,
  }: MiddlewareArgs<R, TTx, TCtx>): Promise<R> {
    const db = o.database(ctx);
    const params = pickFields(input, o.fields);
    const claim = {
      accountId: ctx.account.id,
      key: ctx.idempotencyKey,
      procedure: o.procedure,
      fingerprint: fingerprint(o.procedure, params),
      requestParams: params ?? null,
      leaseSeconds: o.leaseSeconds,
      ttlSeconds: o.ttlSeconds,
    };
    const scope = `${ctx.account.id}\n${ctx.idempotencyKey}`;
    const replay = replayOfPeeked(o.peeked?.(ctx), claim);
    const phase = replay
      ? undefined
      : o.firstPhase && firstPhaseStatement(o.firstPhase, input as TInput, ctx, scope);
    const decision = replay ?? (await decide(db, claim, phase));
    const observe = (outcome: Outcome, keyId?: bigint, fence?: number) => {
      if (ctx.observation)
        ctx.observation.idempotency = {
          keyId: keyId === undefined ? null : String(keyId),
          fence: fence ?? null,
          outcome,
        };
    };

    if (decision.kind === "mismatch") {
      counters.increment("fingerprint_mismatch", o.procedure);
      observe("fingerprint_mismatch", decision.keyId, decision.fence);
      throw new TRPCError({
        code: "UNPROCESSABLE_CONTENT",
        message: "This Idempotency-Key was already used with a different request.",
      });
    }
    if (decision.kind === "in_flight") {
      counters.increment("conflict_in_flight", o.procedure);
      observe("conflict_in_flight", decision.keyId, decision.fence);
      throw inFlight(ctx.resHeaders, o.retryAfterSeconds);
    }
    if (decision.kind === "replay") {
      counters.increment("replayed", o.procedure);
      observe("replayed", decision.keyId, decision.fence);
      ctx.resHeaders.set("Idempotent-Replayed", "true");
      if ("data" in decision.body) {
        const replay = new StoredReplay(decision.body.data);
        const result = await next({ ctx: { idempotency: replay } });
        // A resolver that answered without taking the replay ran its handler: a wiring bug.
        if (result.ok && !replay.taken)
          throw new Error(`the resolver of ${o.procedure} is not wrapped in replayable()`);
        return result;
      }
      const { code, message, details } = decision.body.error;
      throw new TRPCError({ code, message, cause: details ? new ErrorDetails(details) : undefined });
    }

    const owner = new KeyOwner<TTx>(
      db,
      decision.row.id,
      decision.fence,
      decision.recoveryPoint,
      scope,
      o.transactionTimeoutMs,
      decision.row.inserted && phase && decision.row.phaseResult != null
        ? { recoveryPoint: phase.recoveryPoint, value: decision.row.phaseResult }
        : undefined,
      o.procedure,
    );
    const settled = (outcome: Outcome) => observe(outcome, decision.row.id, owner.fence);
    settled(decision.fence === decision.row.fence ? "claimed" : "lease_takeover");
    // Only new work is admitted: a fresh claim, or a takeover of a key whose attempts never began
    // their work. A takeover past "started" resumes work that was admitted when it began (and may
    // have a request out): refusing it would tell the client "refused" while the completer
    // finishes that work anyway.
    const newWork = decision.row.inserted || decision.recoveryPoint === "started";
    if (o.admit && newWork)
      await admitOrWithdraw(db, ctx, o, owner, ownClaimPhase(o.firstPhase, decision.row), settled);
    try {
      const result = await runAsOwner(
        db,
        owner,
        o.leaseSeconds,
        () => next({ ctx: { idempotency: owner } }),
        settled,
      );
      const retryAfter = !result.ok && errorDetailsOf(result.error)?.retryAfterSeconds;
      if (retryAfter) ctx.resHeaders.set("Retry-After", String(retryAfter));
      return result;
    } catch (error) {
      if (isLeaseLost(error)) {
        throw inFlight(ctx.resHeaders, o.retryAfterSeconds, "This attempt lost its lease to a retry.");
      }
      throw error;
    }
  };
}

type Settled = { ok: true; data: unknown } | { ok: false; error: TRPCError };

/** The declared first phase, built into its own statement builder for the claim. */
export function firstPhaseStatement<TInput, TTx>(
  phase: FirstPhase<TInput, TTx>,
  input: TInput,
  ctx: { account: { id: string } },
  scope: string,
): FirstPhaseStatement {
  const ctes = new StatementBuilder();
  const { done, result } = phase.statement(input, ctx, firstPhaseKey(scope), ctes);
  return { recoveryPoint: phase.recoveryPoint, ctes, done, result };
}

/** The first phase when it committed with this attempt's own claim: only then may it be undone. */
function ownClaimPhase<TInput, TTx>(phase: FirstPhase<TInput, TTx> | undefined, row: KeyRow) {
  return phase && row.inserted && row.phaseResult != null ? phase : undefined;
}

/**
 * Runs the admission check of new work; on a refusal, frees the key and undoes this attempt's
 * first phase in one transaction, then rethrows the refusal. A takeover at "started" refused only
 * gives the key back: nothing was written for it.
 */
async function admitOrWithdraw<TTx>(
  db: KeyDb<TTx>,
  ctx: RequiredContext,
  o: {
    admit?: IdempotencyOptions<unknown>["admit"];
    transactionTimeoutMs: number;
    retryAfterSeconds: number;
  },
  owner: KeyOwner<TTx>,
  phase: Pick<FirstPhase<unknown, TTx>, "undo"> | undefined,
  settled: (outcome: Outcome) => void,
): Promise<void> {
  try {
    await o.admit?.(ctx);
  } catch (refusal) {
    const why = refusal instanceof Error ? refusal.message : String(refusal);
    const freed = phase
      ? await withdrawClaim(
          db,
          owner.keyId,
          owner.fence,
          why,
          (tx) => phase.undo(tx, owner.keyId),
          o.transactionTimeoutMs,
        )
      : await releaseKey(db, owner.keyId, owner.fence, why);
    if (freed) {
      counters.increment("refused", owner.procedure);
      settled("refused");
      throw refusal;
    }
    // The lease ran out while admitting and another attempt (a retry, the completer) holds the
    // key and may be doing the work: "refused" would be false. What is true is "in progress".
    counters.increment("fenced", owner.procedure);
    settled("fenced");
    throw inFlight(ctx.resHeaders, o.retryAfterSeconds, "This attempt lost its lease to a retry.");
  }
}

/**
 * Runs an owned key's work and settles the key by the outcome: a success or a business error
 * (4xx) is stored unless the handler already completed the key in its own transaction; an
 * unexpected error releases the key for an immediate retry. Shared by the middleware and the
 * completer, so both treat outcomes alike. Throws LeaseLostError when the key was taken over.
 */
export async function runAsOwner<R extends Settled, TTx>(
  db: KeyDb<TTx>,
  owner: KeyOwner<TTx>,
  leaseSeconds: number,
  run: () => Promise<R>,
  onSettled: (outcome: Outcome) => void = () => {},
): Promise<R> {
  const count = (outcome: Outcome) => {
    counters.increment(outcome, owner.procedure);
    onSettled(outcome);
  };
  const heartbeat = startHeartbeat(() => renewLease(db, owner.keyId, owner.fence), {
    leaseSeconds,
    maxLifeSeconds: maxAttemptSeconds(leaseSeconds),
  });
  try {
    const result = await run();
    // No renewal may land after the key is settled below (it would lock a released key again).
    await heartbeat.stop();
    if (owner.completed) {
      count("completed");
      return result.ok && "data" in owner.completed ? { ...result, data: owner.completed.data } : result;
    }
    if (result.ok && owner.unsettled) {
      // An answer that may still change: given, not stored; the key waits for the retry.
      const hold = owner.unsettled.retryAfterSeconds;
      if (await releaseKey(db, owner.keyId, owner.fence, "answered, not final", hold)) count("released");
      return result;
    }
    if (result.ok) {
      const data = result.data === undefined ? null : JSON.parse(JSON.stringify(result.data));
      await finishWith(db, owner, 200, { data });
      count("completed");
      return { ...result, data };
    }
    if (isLeaseLost(result.error.cause)) throw result.error.cause;
    const retryAfter = errorDetailsOf(result.error)?.retryAfterSeconds;
    if (getStatus(result.error) < 500 && retryAfter === undefined) {
      // A business outcome decided by the handler: remembered and replayed.
      const stored = storedError(result.error);
      await finishWith(db, owner, stored.status, stored.body);
      count("completed");
      return result;
    }
    // Unexpected, or an outcome that may still change: its transaction rolled back, so give the
    // key back for the retry (after the time the client was told to wait, for the latter; a 5xx's
    // Retry-After is advice, and its key is free at once).
    const hold = getStatus(result.error) < 500 ? retryAfter : undefined;
    if (await releaseKey(db, owner.keyId, owner.fence, result.error.message, hold)) count("released");
    return result;
  } catch (error) {
    if (isLeaseLost(error)) {
      count("fenced");
      await recordFenced(db, owner.keyId, owner.fence);
    }
    throw error;
  } finally {
    await heartbeat.stop();
  }
}

/**
 * The longest an attempt keeps its lease by renewing it: far beyond any healthy attempt (whose
 * provider call and transactions have timeouts of their own), short enough that a hung one is
 * taken over within minutes.
 */
export function maxAttemptSeconds(leaseSeconds: number): number {
  return Math.max(leaseSeconds * 4, 120);
}

async function finishWith<TTx>(db: KeyDb<TTx>, owner: KeyOwner<TTx>, status: number, body: StoredResponse) {
  if (!(await completeKey(db, null, owner.keyId, owner.fence, status, JSON.stringify(body)))) {
    throw new LeaseLostError();
  }
}

function getStatus(error: TRPCError): number {
  return storedError(error).status;
}

function inFlight(resHeaders: Headers, retryAfterSeconds: number, message?: string): TRPCError {
  resHeaders.set("Retry-After", String(retryAfterSeconds));
  return new TRPCError({
    code: "CONFLICT",
    message: message ?? "A request with this Idempotency-Key is in progress; retry after the indicated time.",
  });
}

/** A replay decided by a key read ahead (see `peeked`): only for this very request. */
function replayOfPeeked(peeked: PeekedKey | null | undefined, claim: ClaimParams): Decision | undefined {
  if (!peeked || peeked.accountId !== claim.accountId || peeked.key !== claim.key) return undefined;
  if (peeked.fingerprint !== claim.fingerprint) return undefined;
  return { kind: "replay", body: peeked.response, keyId: peeked.id, fence: peeked.fence };
}

async function decide(
  db: KeyDb<unknown>,
  claim: ClaimParams,
  firstPhase?: FirstPhaseStatement,
): Promise<Decision> {
  // A handful of passes covers every race: a concurrent insert our snapshot missed, an expired
  // key deleted for reuse, a takeover lost to another duplicate.
  let phase = firstPhase;
  for (let pass = 0; pass < 5; pass++) {
    let row: KeyRow | undefined;
    try {
      row = await claimKey(db, claim, phase);
    } catch (error) {
      if (!phase || !isRequirementFailure(error, FIRST_PHASE_EMPTY)) throw error;
      phase = undefined;
      continue;
    }
    if (!row) continue;
    if (row.inserted) {
      counters.increment("claimed", claim.procedure);
      return { kind: "own", row, fence: row.fence, recoveryPoint: row.recoveryPoint };
    }
    const unfinishedWork = row.state === "in_progress" && (row.leaseLive || row.recoveryPoint !== "started");
    if (row.expired && !unfinishedWork) {
      await deleteExpiredKey(db, row.id);
      continue;
    }
    const seen = { keyId: row.id, fence: row.fence };
    if (row.fingerprint !== claim.fingerprint) return { kind: "mismatch", ...seen };
    if (row.state === "completed") {
      return { kind: "replay", body: JSON.parse(row.responseBody ?? "null") as StoredResponse, ...seen };
    }
    if (row.leaseLive) return { kind: "in_flight", ...seen };
    const taken = await takeOverKey(db, row.id, row.fence, claim.leaseSeconds);
    if (taken) {
      counters.increment("lease_takeover", claim.procedure);
      return { kind: "own", row, fence: taken.fence, recoveryPoint: taken.recoveryPoint };
    }
  }
  return { kind: "in_flight" };
}

/** A server's own keyed call (no HTTP request): who it is for, its key and its request. */
export interface KeyedCall {
  accountId: string;
  key: string;
  procedure: string;
  params: unknown;
  leaseSeconds?: number;
  ttlSeconds?: number;
}

export type KeyedCallOutcome<T> =
  | { outcome: "ran"; result: { ok: true; data: T } | { ok: false; error: TRPCError } }
  | { outcome: "replayed"; body: StoredResponse }
  | { outcome: "busy" }
  | { outcome: "mismatch" };

/**
 * Runs `handler` once per (account, key) as the middleware runs a procedure, for work a server
 * starts itself (an authorization's expiry): the same claim, takeover, fencing and stored
 * outcome, so a crash mid-way is finished by the completer or by the next call with the key.
 */
export async function runKeyed<T, TTx>(
  db: KeyDb<TTx>,
  call: KeyedCall,
  handler: (owner: KeyOwner<TTx>) => Promise<T>,
): Promise<KeyedCallOutcome<T>> {
  const o = IDEMPOTENCY_DEFAULTS;
  const params = call.params ?? null;
  const claim = {
    accountId: call.accountId,
    key: call.key,
    procedure: call.procedure,
    fingerprint: fingerprint(call.procedure, params),
    requestParams: params,
    leaseSeconds: call.leaseSeconds ?? o.leaseSeconds,
    ttlSeconds: call.ttlSeconds ?? o.ttlSeconds,
  };
  const decision = await decide(db, claim);
  if (decision.kind === "mismatch") return { outcome: "mismatch" };
  if (decision.kind === "in_flight") return { outcome: "busy" };
  if (decision.kind === "replay") return { outcome: "replayed", body: decision.body };
  const owner = new KeyOwner<TTx>(
    db,
    decision.row.id,
    decision.fence,
    decision.recoveryPoint,
    `${call.accountId}\n${call.key}`,
    o.transactionTimeoutMs,
    undefined,
    call.procedure,
  );
  const result = await runAsOwner(db, owner, claim.leaseSeconds, async () => {
    try {
      return { ok: true as const, data: await handler(owner) };
    } catch (error) {
      return { ok: false as const, error: getTRPCErrorFromUnknown(error) };
    }
  });
  return { outcome: "ran", result };
}
