import type { KeyDb } from "./db.js";
import { deriveKeySql } from "./derived-key.js";
import {
  empty,
  failedRequirement,
  join,
  type Requirement,
  RequirementFailedError,
  requirement,
  requireSql,
  type Sql,
  StatementBuilder,
  sql,
} from "./sql.js";

/** What the claim statement tells the middleware about a key, fresh or existing. */
export interface KeyRow {
  inserted: boolean;
  id: bigint;
  fingerprint: string;
  state: "in_progress" | "completed";
  recoveryPoint: string;
  fence: number;
  responseStatus: number | null;
  responseBody: string | null;
  leaseLive: boolean;
  expired: boolean;
  /** The first phase's value (json), when it ran with the claim. */
  phaseResult: unknown;
}

export interface ClaimParams {
  accountId: string;
  key: string;
  procedure: string;
  fingerprint: string;
  requestParams: unknown;
  leaseSeconds: number;
  ttlSeconds: number;
}

/**
 * The key's history is its row's for the ordinary life of a key (claimed at created_at, the first
 * phase with the claim as claim_point, completed at completed_at: view idempotency_key_history,
 * decision 0105); only the unusual events below (takeovers, releases, pauses, refusals, fenced
 * attempts, progress after the claim, re-drives) are rows of their own.
 *
 * The claim: one statement that inserts the key (ON CONFLICT DO NOTHING — the database picks the
 * winner) or, when it exists, returns the existing row, so every outcome costs one round trip.
 * Under a concurrent insert the fallback SELECT can miss a row committed after the statement's
 * snapshot; the caller then simply runs it again.
 */
export async function claimKey(
  db: KeyDb<unknown>,
  p: ClaimParams,
  phase?: FirstPhaseStatement,
): Promise<KeyRow | undefined> {
  const rows = await db.query<KeyRow>(claimStatement(p, phase));
  const row = rows[0];
  return row && { ...row, id: BigInt(row.id) };
}

/** The claim's SQL (the bench sends it through node-postgres alone, to price the ORM). */
export function claimStatement(p: ClaimParams, phase?: FirstPhaseStatement): Sql {
  const recoveryPoint = phase ? phase.recoveryPoint : "started";
  return sql`
    WITH ins AS (
      INSERT INTO idempotency_keys
        (account_id, key, procedure, fingerprint, request_params, lease_seconds, locked_until, expires_at,
         recovery_point, claim_point)
      VALUES (${p.accountId}::uuid, ${p.key}, ${p.procedure}, ${p.fingerprint},
              ${JSON.stringify(p.requestParams)}::jsonb, ${p.leaseSeconds},
              now() + make_interval(secs => ${p.leaseSeconds}), now() + make_interval(secs => ${p.ttlSeconds}),
              ${recoveryPoint}, ${phase ? phase.recoveryPoint : null})
      ON CONFLICT (account_id, key) DO NOTHING
      RETURNING *
    )${phase?.ctes.hasCtes ? sql`, ${phase.ctes.ctes}` : empty}
    SELECT true AS inserted, id, fingerprint, state, recovery_point AS "recoveryPoint", fence,
           response_status AS "responseStatus", response_body::text AS "responseBody",
           true AS "leaseLive", false AS expired,
           ${phase ? sql`${requireSql(phase.done, FIRST_PHASE_EMPTY)} AND true` : sql`true`} AS "phaseDone",
           ${phase ? phase.result : sql`NULL::json`} AS "phaseResult"
      FROM ins
    UNION ALL
    SELECT false, id, fingerprint, state, recovery_point, fence, response_status, response_body::text,
           coalesce(locked_until > now(), false), expires_at <= now(), true, NULL::json
      FROM idempotency_keys
     WHERE account_id = ${p.accountId}::uuid AND key = ${p.key} AND NOT EXISTS (SELECT 1 FROM ins)`;
}

/** Raised by a claim whose first phase wrote nothing: the claim runs again without it. */
export const FIRST_PHASE_EMPTY = requirement("idempotency.first_phase_empty");

/**
 * A handler's first atomic phase as part of the claim statement (decision 0016), as in Brandur
 * Leach's rocket-rides-atomic where the key's insert and the first phase commit together. Its
 * CTEs run only when the key is inserted; `claimedKey` names the new key's id for them.
 */
export interface FirstPhaseStatement {
  recoveryPoint: string;
  /** The phase's CTEs, generated names and all. */
  ctes: StatementBuilder;
  /** Must hold when the key was inserted, else the whole claim rolls back. */
  done: Sql;
  /** The phase's value for the handler, as json. */
  result: Sql;
}

/** What a first phase's statement may use of the key the claim is inserting. */
export interface ClaimedKey {
  /** The new key's id (bigint). */
  id: Sql;
  /** True only when the claim inserted the key: the phase's writes must require it. */
  isNew: Sql;
  /** `KeyOwner.derivedKey(purpose)` of the new key, computed in the statement. */
  derivedKey(purpose: string): Sql;
}

export function firstPhaseKey(scope: string): ClaimedKey {
  return {
    id: claimedKeyId,
    isNew: keyIsNew,
    derivedKey: (purpose: string) => claimedDerivedKey(scope, purpose),
  };
}

/** True in the claim statement only when it inserted the key. */
export const keyIsNew = sql`EXISTS (SELECT 1 FROM ins)`;

/** The freshly inserted key's id, for a first phase's CTEs. */
export const claimedKeyId = sql`(SELECT id FROM ins)`;

/** The derived downstream key of the freshly inserted key (derived-key.ts defines it). */
export function claimedDerivedKey(scope: string, purpose: string): Sql {
  return deriveKeySql(scope, claimedKeyId, purpose);
}

/** Who takes a key over: a client's retry, or the completer on its backoff schedule. */
export type Taker =
  | { by: "client" }
  | { by: "completer"; backoffSeconds: (completerAttempts: number) => number };

/**
 * Takes over a key whose lease ran out (or was released); only one contender can win. The
 * completer's attempts are counted apart and schedule its next try, so clients retrying
 * through an outage never use up the completer's patience.
 */
export async function takeOverKey(
  db: KeyDb<unknown>,
  id: bigint,
  seenFence: number,
  leaseSeconds: number,
  taker: Taker = { by: "client" },
) {
  const byCompleter = taker.by === "completer";
  const rows = await db.query<{ fence: number; recoveryPoint: string; completerAttempts: number }>(sql`
    WITH taken AS (
      UPDATE idempotency_keys
         SET fence = fence + 1, attempts = attempts + 1, lease_seconds = ${leaseSeconds},
             completer_attempts = completer_attempts + ${byCompleter ? 1 : 0},
             locked_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
       WHERE id = ${id} AND fence = ${seenFence} AND state = 'in_progress'
         AND (locked_until IS NULL OR locked_until <= now())
      RETURNING id, fence, recovery_point, completer_attempts
    ), ev AS (
      INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
      SELECT id, 'taken_over', fence, ${taker.by} FROM taken
    )
    SELECT fence, recovery_point AS "recoveryPoint", completer_attempts AS "completerAttempts" FROM taken`);
  const taken = rows[0];
  if (taken && taker.by === "completer") {
    // Scheduled now, so a completer that dies mid-attempt still leaves the key its backoff.
    await db.execute(sql`
      UPDATE idempotency_keys
         SET next_recovery_at = now() + make_interval(secs => ${taker.backoffSeconds(taken.completerAttempts)})
       WHERE id = ${id} AND fence = ${taken.fence}`);
  }
  return taken;
}

/**
 * Deletes an expired key so that reusing it is a new request; never one with a live lease (a
 * released key, locked_until NULL, has none), nor one in progress past its first recovery point:
 * its work may have moved money, and a new key row would derive new downstream keys.
 */
export async function deleteExpiredKey(db: KeyDb<unknown>, id: bigint): Promise<boolean> {
  const n = await db.execute(sql`
    DELETE FROM idempotency_keys
     WHERE id = ${id} AND expires_at <= now()
       AND NOT (state = 'in_progress' AND (coalesce(locked_until > now(), false) OR recovery_point <> 'started'))`);
  return n > 0;
}

/**
 * Marks the key completed with its response, inside the caller's business transaction. It is the
 * fence: when the key was taken over, no row matches and the caller must roll back.
 */
export async function completeKey<TTx>(
  db: KeyDb<TTx>,
  tx: TTx | null,
  id: bigint,
  fence: number,
  status: number,
  body: string,
) {
  const statement = sql`
    WITH done AS (
      UPDATE idempotency_keys
         SET state = 'completed', response_status = ${status}, response_body = ${body}::json,
             completed_at = now(), updated_at = now(), locked_until = NULL, last_error = NULL,
             -- A full TTL from completion: a key completed late keeps its replay window.
             expires_at = now() + (expires_at - created_at)
       WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
      RETURNING id, fence
    )
    SELECT count(*)::int AS n FROM done`;
  const rows = await (tx === null
    ? db.query<{ n: number }>(statement)
    : db.queryIn<{ n: number }>(tx, statement));
  return (rows[0]?.n ?? 0) === 1;
}

/**
 * A handler's writes that commit in the key's completion statement (decision 0016): data-modifying
 * CTEs and the requirements over them, added to the builder. A requirement marked `fenced` means
 * another attempt got there first: it fails like a lost fence, as a LeaseLostError.
 */
export type StatementWrites = (b: StatementBuilder) => void;

/** Raised by a completion whose key was taken over meanwhile (the fence moved). */
export const FENCE_LOST = requirement("idempotency.fence_lost", { fenced: true });

/**
 * The business writes and the key's completion as one statement, committed on its own (no
 * BEGIN, no COMMIT): the final phase in one round trip. A lost fence or a failed requirement
 * raises inside the statement, so it commits nothing. Returns false when the fence was lost.
 */
export async function completeKeyWith(
  db: KeyDb<unknown>,
  id: bigint,
  fence: number,
  status: number,
  body: string,
  writes: StatementWrites,
): Promise<boolean> {
  const { statement, requirements } = completion(id, fence, status, body, writes);
  try {
    await db.query(statement);
    return true;
  } catch (error) {
    const code = failedRequirement(error);
    const failed = code === undefined ? undefined : requirements.find((r) => r.code === code);
    if (failed?.fenced) return false;
    if (failed) throw new RequirementFailedError(failed.code, error);
    throw error;
  }
}

/** The final phase's SQL with the key's completion (sent alone by the bench, too). */
export function completionStatement(
  id: bigint,
  fence: number,
  status: number,
  body: string,
  writes: StatementWrites,
): Sql {
  return completion(id, fence, status, body, writes).statement;
}

function completion(id: bigint, fence: number, status: number, body: string, writes: StatementWrites) {
  const b = new StatementBuilder();
  writes(b);
  const checks = b.requirements.map((r) => requireSql(r.condition, r.requirement));
  const requirements: Requirement[] = [FENCE_LOST, ...b.requirements.map((r) => r.requirement)];
  const statement = sql`
      WITH ${b.hasCtes ? sql`${b.ctes}, ` : empty}done AS (
        UPDATE idempotency_keys
           SET state = 'completed', response_status = ${status}, response_body = ${body}::json,
               completed_at = now(), updated_at = now(), locked_until = NULL, last_error = NULL,
               -- A full TTL from completion, as completeKey.
               expires_at = now() + (expires_at - created_at)
         WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
        RETURNING id, fence
      )
      SELECT ${join([requireSql(sql`(SELECT count(*) FROM done) = 1`, FENCE_LOST), ...checks], " AND ")} AS ok`;
  return { statement, requirements };
}

/** Records a recovery point and renews the lease, in the phase's transaction; fenced like completion. */
export async function recordProgress<TTx>(
  db: KeyDb<TTx>,
  tx: TTx,
  id: bigint,
  fence: number,
  recoveryPoint: string,
) {
  const rows = await db.queryIn<{ n: number }>(
    tx,
    sql`
    WITH moved AS (
      UPDATE idempotency_keys
         SET recovery_point = ${recoveryPoint}, updated_at = now(),
             locked_until = now() + make_interval(secs => lease_seconds)
       WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
      RETURNING id, fence
    ), ev AS (
      INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
      SELECT id, 'progressed', fence, ${recoveryPoint} FROM moved
    )
    SELECT count(*)::int AS n FROM moved`,
  );
  return (rows[0]?.n ?? 0) === 1;
}

/**
 * Renews the lease of a long-running owner; false means the key was taken over or released (a
 * renewal racing the release must not lock the key again).
 */
export async function renewLease(db: KeyDb<unknown>, id: bigint, fence: number): Promise<boolean> {
  const n = await db.execute(sql`
    UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => lease_seconds)
     WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress' AND locked_until IS NOT NULL`);
  return n === 1;
}

/**
 * Gives the key back after an unexpected error, so the retry may take it over at once; with
 * holdSeconds, keeps it that long first (the outcome may change by then: a duplicate inside the
 * window is told 409, not handed the key).
 */
export async function releaseKey(
  db: KeyDb<unknown>,
  id: bigint,
  fence: number,
  reason: string,
  holdSeconds?: number,
): Promise<boolean> {
  const why = reason.slice(0, 500);
  const rows = await db.query<{ n: number }>(sql`
    WITH released AS (
      UPDATE idempotency_keys
         SET locked_until = CASE WHEN ${holdSeconds ?? null}::int IS NULL THEN NULL
                                 ELSE now() + make_interval(secs => ${holdSeconds ?? null}::int) END,
             updated_at = now(), last_error = ${why}
       WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
      RETURNING id, fence
    ), ev AS (
      INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
      SELECT id, ${holdSeconds === undefined ? "released" : "paused"}, fence, ${why} FROM released
    )
    SELECT count(*)::int AS n FROM released`);
  return (rows[0]?.n ?? 0) === 1;
}

/**
 * Takes back a fresh claim whose request was refused before its work began: `undo` removes what
 * the first phase wrote, and the key returns to "started", free, in the same transaction, so the
 * refusal leaves no work behind and the same key may be sent again. Fenced: false (and nothing
 * undone) when another attempt holds the key.
 */
export async function withdrawClaim<TTx>(
  db: KeyDb<TTx>,
  id: bigint,
  fence: number,
  reason: string,
  undo: (tx: TTx) => Promise<unknown>,
  timeoutMs: number,
): Promise<boolean> {
  const why = reason.slice(0, 500);
  return db.transaction(
    async (tx) => {
      const rows = await db.queryIn<{ n: number }>(
        tx,
        sql`
      WITH withdrawn AS (
        UPDATE idempotency_keys
           SET recovery_point = 'started', locked_until = NULL, updated_at = now(), last_error = ${why}
         WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
        RETURNING id, fence
      ), ev AS (
        INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
        SELECT id, 'refused', fence, ${why} FROM withdrawn
      )
      SELECT count(*)::int AS n FROM withdrawn`,
      );
      if ((rows[0]?.n ?? 0) !== 1) return false;
      await undo(tx);
      return true;
    },
    { timeoutMs },
  );
}

export async function recordFenced(db: KeyDb<unknown>, id: bigint, fence: number): Promise<void> {
  await recordKeyEvent(db, id, "fenced", null, fence);
}

/** A line in the key's history; the fence defaults to the key's current one. */
export async function recordKeyEvent(
  db: KeyDb<unknown>,
  id: bigint,
  kind: string,
  detail: string | null,
  fence?: number,
): Promise<void> {
  await db.execute(sql`
    INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
    SELECT id, ${kind}, coalesce(${fence ?? null}::int, fence), ${detail} FROM idempotency_keys WHERE id = ${id}`);
}
