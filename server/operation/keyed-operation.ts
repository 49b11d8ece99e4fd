import { LeaseLostError } from "@idempotent-checkout/idempotency";
import { raw, type Sql, sql } from "@idempotent-checkout/idempotency/sql";
import type { TRPCError } from "@trpc/server";
import { type Db, rawQuery, type Tx } from "../db";
import { failpoint } from "../failpoints";
import type { AbandonedKey, KeyOwner } from "../keys";
import { operationCompleter } from "./completer";
import { askProvider, callProvider, type MarkedRow, type ProviderTerms } from "./provider-call";
import { type OperationRows, resumeRow } from "./resume";

/** How one attempt of an operation runs: the completer's limit, a test's provider fault. */
export interface AttemptOptions {
  /** The completer: a row older than this whose request never left is ended, nothing moved. */
  abandonAfterSeconds?: number;
  /** Test set-ups may ask the provider for a fault (latency, 5xx, drop) on this request. */
  providerFault?: string;
  /**
   * A write that commits with the key's completion, whichever way it ends (a provider event
   * recorded in the transaction that applies it). Written only when this attempt completes the key.
   */
  alongside?: Sql;
}

/** Why the provider refused an operation's request for good. */
export interface Refusal {
  refused: string;
  code: string;
}

/** How a resumed attempt finds what an earlier one made: by its provider key, else by metadata. */
export type EarlierFilter = { idempotencyKey: string } | { metadata: Record<string, string> };
type OperationRow = MarkedRow & { providerKey: string };
type Made = { metadata: Record<string, string> };

/**
 * One kind of money movement, as the keyed operation runs it: a durable row marked "a request may
 * have left" (phase 1), the provider's call with a key derived from the client's (phase 2), and one
 * completion of the key with the operation's writes (phase 3). Payments and refunds are instances;
 * a new kind of money movement is a new instance, in a file of its own.
 */
export interface KeyedOperationDefinition<
  TDeps extends { prisma: Db },
  TRequest,
  TRow extends OperationRow,
  TMade extends Made,
  TResult,
  TInput = unknown,
> {
  /** The procedure's identity in the key store; the completer finds its keys by it. */
  procedure: string;
  /** Crash points for the recovery tests: after phase 1 commits, after the provider answers. */
  failpoints: { created: string; provider: string };
  /** The recovery point phase 1 records; "started" is the one before it. */
  createdPoint: string;
  /** Where the rows are read from on a resumed attempt, and how one becomes `TRow`. */
  rows: OperationRows & { fromRow: (row: never) => TRow };
  /** Phase 1 in the owner's transaction: the pending row, its request marked as leaving. */
  create: (tx: Tx, owner: KeyOwner, request: TRequest) => Promise<TRow>;
  /** Phase 1's refusal by the database, as the answer phase 1 would have given (none: rethrown). */
  createRefused?: (prisma: Db, request: TRequest, error: unknown) => Promise<TRPCError | undefined>;
  /** The request a completer resumes, from what the key stored. */
  requestOf: (key: AbandonedKey) => TRequest;
  /** A completer's default for `abandonAfterSeconds` (none: only what its options say). */
  abandonAfterSeconds?: number;
  provider: Omit<ProviderTerms, "mark"> & {
    /**
     * Lists what the provider made with one idempotency key, or with metadata: a resumed attempt
     * asks before it sends again, since the provider forgets keys (Stripe after 24 h).
     */
    list: (deps: TDeps, filter: EarlierFilter, row: TRow) => AsyncIterable<TMade>;
    /** The metadata key under which each request carries the row's id. */
    rowIdKey: string;
    /** The provider request for a row: its body (the row's id in its metadata under `rowIdKey`). */
    request: (row: TRow) => TInput;
    /** Sends it with the key derived for the row (a test may ask the provider for a fault). */
    send: (deps: TDeps, request: TInput, idempotencyKey: string, opts?: { fault: string }) => Promise<TMade>;
    /** Throws when what the provider made does not match the row (never booked as ours). */
    check: (made: TMade, row: TRow) => TMade;
  };
  /** The answer for a row abandoned with nothing moved. */
  abandoned: (row: TRow) => TRPCError;
  /** The answer for a definite refusal, its figures from the provider's own records. */
  refused: (deps: TDeps, row: TRow, refusal: Refusal) => Promise<TRPCError>;
  /**
   * Phase 3: what the provider made, settled and booked with the key's completion, `alongside`
   * (when given) in the same transaction.
   */
  finish: (deps: TDeps, owner: KeyOwner, row: TRow, made: TMade, alongside?: Sql) => Promise<TResult>;
}

/**
 * The keyed operation: the same code serves the client's request, its retries after a takeover
 * and the completer, so whatever the provider did for a row is always settled once.
 */
export function keyedOperation<
  TDeps extends { prisma: Db },
  TRequest,
  TRow extends OperationRow,
  TMade extends Made,
  TResult,
  TInput,
>(op: KeyedOperationDefinition<TDeps, TRequest, TRow, TMade, TResult, TInput>) {
  const fromRow = op.rows.fromRow as (row: unknown) => TRow;
  const terms: ProviderTerms = { ...op.provider, mark: op.rows.mark };

  async function execute(deps: TDeps, owner: KeyOwner, request: TRequest, opts: AttemptOptions = {}) {
    // Phase 1 may have committed with the claim (its row is then the claim's phase result).
    const created = owner.phaseResult<unknown>(op.createdPoint);
    const resumed = !created && owner.recoveryPoint !== "started";
    const found = resumed
      ? await resumeRow<unknown>(deps.prisma, op.rows, owner.keyId, opts.abandonAfterSeconds)
      : null;
    const row = created
      ? fromRow(created)
      : found
        ? fromRow(found.row)
        : await owner
            .atomicPhase(op.createdPoint, (tx) => op.create(tx, owner, request))
            .catch(async (error: unknown) => {
              throw (await op.createRefused?.(deps.prisma, request, error)) ?? error;
            });
    failpoint(op.failpoints.created);

    // Proven by our own durable mark: no request for it ever left, so nothing can have moved.
    // Only such a row is abandoned; one whose request may be out is driven to the provider's answer.
    if (found?.abandonable) {
      const answer = op.abandoned(row);
      return owner.fail(answer, (tx) =>
        endFailed(tx, op.rows, row.id, "abandoned", answer.message, {
          onlyIfNeverRequested: true,
          alongside: opts.alongside,
        }),
      );
    }
    const earlier = resumed ? await askProvider(() => findEarlier(deps, row), op.provider.inFlight) : null;
    const outcome = earlier
      ? { made: earlier }
      : await callProvider(deps.prisma, terms, { id: row.id, requestedAt: row.requestedAt, resumed }, () =>
          op.provider.send(
            deps,
            op.provider.request(row),
            row.providerKey,
            opts.providerFault ? { fault: opts.providerFault } : undefined,
          ),
        );
    failpoint(op.failpoints.provider);
    if ("refused" in outcome) {
      const answer = await op.refused(deps, row, outcome);
      return owner.fail(answer, (tx) =>
        endFailed(tx, op.rows, row.id, outcome.code, outcome.refused, { alongside: opts.alongside }),
      );
    }
    return op.finish(deps, owner, row, op.provider.check(outcome.made, row), opts.alongside);
  }

  /** The oldest thing the provider made for this row; any other is a duplicate for the reconciler. */
  async function findEarlier(deps: TDeps, row: TRow): Promise<TMade | null> {
    const key = op.provider.rowIdKey;
    for (const filter of [{ idempotencyKey: row.providerKey }, { metadata: { [key]: row.id } }]) {
      for await (const made of op.provider.list(deps, filter, row))
        if (made.metadata[key] === row.id) return made;
    }
    return null;
  }

  const completer = operationCompleter<TDeps>({
    procedure: op.procedure,
    startedPoint: "started",
    execute: (deps, key, opts) =>
      execute(deps, key.owner, op.requestOf(key), {
        abandonAfterSeconds: opts.abandonAfterSeconds ?? op.abandonAfterSeconds,
        alongside: opts.alongside,
      }),
  });
  return { procedure: op.procedure, createdPoint: op.createdPoint, execute, ...completer };
}

/**
 * A row's failed end, fenced by its status: when it is no longer pending, another attempt settled
 * it after taking the key over, so this one rolls back and answers 409 (LeaseLostError).
 */
async function endFailed(
  tx: Tx,
  rows: OperationRows,
  id: string,
  failureCode: string,
  failureMessage: string,
  opts: { onlyIfNeverRequested?: boolean; alongside?: Sql | undefined } = {},
) {
  const { table, column } = rows.mark;
  const never = opts.onlyIfNeverRequested ? sql`AND ${raw(column)} IS NULL` : sql``;
  const ended = await rawQuery<{ id: string }>(
    tx,
    sql`UPDATE ${raw(table)}
           SET status = 'failed', failure_code = ${failureCode}, failure_message = ${failureMessage}, updated_at = now()
         WHERE id = ${id}::uuid AND status = 'pending' ${never}
        RETURNING id`,
  );
  if (ended.length !== 1) throw new LeaseLostError();
  await writeAlongside(tx, opts.alongside);
}

/** The caller's write that commits with the key's completion (none given: nothing). */
export async function writeAlongside(tx: Tx, alongside: Sql | undefined) {
  if (alongside) await rawQuery(tx, alongside);
}
