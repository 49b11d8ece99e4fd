import { TRPCError, type TRPCMiddlewareFunction } from "@trpc/server";
import { abandonedKeyStats } from "./abandoned.js";
import { completerFor, type Driver } from "./completer.js";
import { counters, startCounterFlush } from "./counters.js";
import type { KeyDb } from "./db.js";
import { checkIdempotentCall } from "./key-header.js";
import {
  type IdempotencyHandle,
  type IdempotencyOptions,
  idempotent,
  type KeyedCall,
  replayable,
  runKeyed,
} from "./middleware.js";
import type { KeyOwner } from "./owner.js";
import type { PeekedKey } from "./peek.js";
import { sweepExpiredKeys } from "./sweep.js";

export interface IdempotencyConfig<TDb, TTx, TCtx> {
  /** The app's database handle in a request's context (the same one its handlers use). */
  db: (ctx: TCtx) => TDb;
  /** The layer's view of such a handle: `nodePostgresKeyDb(pool)`, or an adapter of your ORM's. */
  keyDb: (db: TDb) => KeyDb<TTx>;
  /**
   * A completed key that a statement the app sent anyway read ahead (`peekCompletedKey` from
   * `/sql`, in the statement that authenticates the request, say): its replay needs no claim.
   */
  peeked?: (ctx: TCtx) => PeekedKey | null | undefined;
  /** A background job's failure (a completer's key, a counter flush): kept and retried; log it. */
  onError?: (error: unknown, where: { job: string; keyId?: bigint }) => void;
}

/** What an idempotent procedure declares: its name, fields, lease, first phase and admission. */
export type ProcedureOptions<TInput, TTx = unknown> = Omit<
  IdempotencyOptions<TInput, TTx>,
  "database" | "peeked"
>;

/**
 * What the key header check reads of the context: the request's headers, and how the call arrived
 * (a batched or streamed call cannot carry its own status and headers, so it is refused).
 */
interface HeaderContext {
  reqHeaders: Headers;
  transport: { batched: boolean; streamed?: boolean };
}
/** What a claim reads of the context beyond the app's own: the account, the key, the answer's headers. */
interface ClaimContext {
  account: { id: string };
  idempotencyKey: string;
  resHeaders: Headers;
}

/**
 * The layer's front door: everything an app mounts, bound once to its database. `keyHeader` and
 * `claim(options)` are tRPC middlewares (`procedure.use(keyHeader).use(auth).input(Z).use(claim(o))`),
 * `replayable` wraps the resolver; `completer(db, driver)` finishes a procedure's unfinished keys;
 * `sweep`, `startCounterFlush` and `counters` are the housekeeping.
 */
export function createIdempotency<TDb, TTx, TCtx>(config: IdempotencyConfig<TDb, TTx, TCtx>) {
  const onError = config.onError ?? (() => {});
  const keyHeader: TRPCMiddlewareFunction<
    HeaderContext,
    unknown,
    object,
    { idempotencyKey: string },
    unknown
  > = ({ ctx, next }) => {
    const checked = checkIdempotentCall(ctx.reqHeaders.get("idempotency-key"), ctx.transport);
    if (!checked.ok) throw new TRPCError({ code: "BAD_REQUEST", message: checked.reason });
    return next({ ctx: { idempotencyKey: checked.key } });
  };

  /** The claim, replay, 409 and 422 of one procedure; its input is typed by the validator before it. */
  function claim<TInput>(
    options: ProcedureOptions<TInput, TTx>,
  ): TRPCMiddlewareFunction<
    TCtx & ClaimContext,
    unknown,
    object,
    { idempotency: IdempotencyHandle<TTx> },
    unknown
  > {
    const middleware = idempotent<TInput, TTx, TCtx>({
      ...options,
      database: (ctx) => config.keyDb(config.db(ctx)),
      peeked: config.peeked,
    });
    return ({ ctx, input, next }) =>
      // tRPC hands the context over simplified: the same object, typed afresh.
      middleware({
        ctx: ctx as TCtx & ClaimContext,
        input,
        next: (o: { ctx: { idempotency: IdempotencyHandle<TTx> } }) => next(o),
      });
  }

  return {
    keyHeader,
    claim,
    replayable,
    /** A server's own keyed call, run once per (account, key) like a procedure (see runKeyed). */
    run: <T>(db: TDb, call: KeyedCall, handler: (owner: KeyOwner<TTx>) => Promise<T>) =>
      runKeyed<T, TTx>(config.keyDb(db), call, handler),
    completer: (db: TDb, driver: Driver<TTx>) =>
      completerFor(config.keyDb(db), driver, (error, keyId) =>
        onError(error, { job: `completer ${driver.procedure}`, keyId }),
      ),
    /** A procedure's unfinished keys past `startedPoint`, for a metrics gauge. */
    backlog: (db: TDb, driver: Pick<Driver, "procedure" | "startedPoint">) =>
      abandonedKeyStats(config.keyDb(db), {
        procedure: driver.procedure,
        skipRecoveryPoints: [driver.startedPoint],
      }),
    sweep: (db: TDb, opts?: Parameters<typeof sweepExpiredKeys>[1]) =>
      sweepExpiredKeys(config.keyDb(db), opts),
    /** Flushes this process's outcome counts every few seconds (and once when stopped). */
    startCounterFlush: (db: TDb, everyMs?: number) =>
      startCounterFlush(config.keyDb(db), {
        everyMs,
        onError: (error) => onError(error, { job: "counters" }),
      }),
    counters,
  };
}

export type Idempotency<TDb, TTx, TCtx> = ReturnType<typeof createIdempotency<TDb, TTx, TCtx>>;
