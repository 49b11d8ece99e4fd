import { type Db, rawQuery, type Tx } from "../db";
import { Prisma } from "../generated/prisma/client";

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
  prisma: Db | Tx,
  p: ClaimParams,
  phase?: FirstPhaseStatement,
): Promise<KeyRow | undefined> {
  const rows = await rawQuery<KeyRow>(prisma, claimStatement(p, phase));
  return rows[0];
}

/** The claim's SQL (the bench sends it through node-postgres alone, to price the ORM). */
export function claimStatement(p: ClaimParams, phase?: FirstPhaseStatement): Prisma.Sql {
  const recoveryPoint = phase ? phase.recoveryPoint : "started";
  return Prisma.sql`
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
    )${phase ? Prisma.sql`, ${phase.ctes}` : Prisma.empty}
    SELECT true AS inserted, id, fingerprint, state, recovery_point AS "recoveryPoint", fence,
           response_status AS "responseStatus", response_body::text AS "responseBody",
           true AS "leaseLive", false AS expired,
           ${phase ? Prisma.sql`statement_require(${phase.done}, ${FIRST_PHASE_FAILED}) AND true` : Prisma.sql`true`} AS "phaseDone",
           ${phase ? phase.result : Prisma.sql`NULL::json`} AS "phaseResult"
      FROM ins
    UNION ALL
    SELECT false, id, fingerprint, state, recovery_point, fence, response_status, response_body::text,
           coalesce(locked_until > now(), false), expires_at <= now(), true, NULL::json
      FROM idempotency_keys
     WHERE account_id = ${p.accountId}::uuid AND key = ${p.key} AND NOT EXISTS (SELECT 1 FROM ins)`;
}

const FIRST_PHASE_FAILED = "first phase wrote nothing";

/** True for the error of a claim whose first phase could not run: claim again without it. */
export function isFirstPhaseFailure(error: unknown): boolean {
  return error instanceof Error && error.message.includes(`requirement failed: ${FIRST_PHASE_FAILED}`);
}

/**
 * A handler's first atomic phase as part of the claim statement (decision 0016), as in Brandur
 * Leach's rocket-rides-atomic where the key's insert and the first phase commit together. Its
 * CTEs run only when the key is inserted; `claimedKey` names the new key's id for them.
 */
export interface FirstPhaseStatement {
  recoveryPoint: string;
  ctes: Prisma.Sql;
  /** Must hold when the key was inserted, else the whole claim rolls back. */
  done: Prisma.Sql;
  /** The phase's value for the handler, as json. */
  result: Prisma.Sql;
}

/** What a first phase's statement may use of the key the claim is inserting. */
export function firstPhaseKey(scope: string) {
  return {
    id: claimedKeyId,
    isNew: keyIsNew,
    derivedKey: (purpose: string) => claimedDerivedKey(scope, purpose),
  };
}

/** True in the claim statement only when it inserted the key. */
export const keyIsNew = Prisma.sql`EXISTS (SELECT 1 FROM ins)`;

/** The freshly inserted key's id, for a first phase's CTEs. */
export const claimedKeyId = Prisma.sql`(SELECT id FROM ins)`;

/** The derived downstream key of the freshly inserted key, computed as deriveKey does. */
export function claimedDerivedKey(scope: string, purpose: string): Prisma.Sql {
  return Prisma.sql`('ick_' || lpad(to_hex((SELECT id FROM ins)), 16, '0') || left(encode(sha256(convert_to(${`${scope}\n`} || (SELECT id FROM ins)::text || ${`\n${purpose}`}, 'UTF8')), 'hex'), 24))`;
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
  prisma: Db,
  id: bigint,
  seenFence: number,
  leaseSeconds: number,
  taker: Taker = { by: "client" },
) {
  const byCompleter = taker.by === "completer";
  const rows = await prisma.$queryRaw<{ fence: number; recoveryPoint: string; completerAttempts: number }[]>`
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
    SELECT fence, recovery_point AS "recoveryPoint", completer_attempts AS "completerAttempts" FROM taken`;
  const taken = rows[0];
  if (taken && taker.by === "completer") {
    // Scheduled now, so a completer that dies mid-attempt still leaves the key its backoff.
    await prisma.$executeRaw`
      UPDATE idempotency_keys
         SET next_recovery_at = now() + make_interval(secs => ${taker.backoffSeconds(taken.completerAttempts)})
       WHERE id = ${id} AND fence = ${taken.fence}`;
  }
  return taken;
}

/**
 * Deletes an expired key so that reusing it is a new request; never one with a live lease (a
 * released key, locked_until NULL, has none), nor one in progress past its first recovery point:
 * its work may have moved money, and a new key row would derive new downstream keys.
 */
export async function deleteExpiredKey(prisma: Db, id: bigint): Promise<boolean> {
  const n = await prisma.$executeRaw`
    DELETE FROM idempotency_keys
     WHERE id = ${id} AND expires_at <= now()
       AND NOT (state = 'in_progress' AND (coalesce(locked_until > now(), false) OR recovery_point <> 'started'))`;
  return n > 0;
}

/**
 * Marks the key completed with its response, inside the caller's business transaction. It is the
 * fence: when the key was taken over, no row matches and the caller must roll back.
 */
export async function completeKey(tx: Db | Tx, id: bigint, fence: number, status: number, body: string) {
  const rows = await tx.$queryRaw<{ n: number }[]>`
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
  return (rows[0]?.n ?? 0) === 1;
}

/** A handler's writes that commit in the key's completion statement (decision 0016). */
export interface StatementWrites {
  /** Data-modifying CTEs, `name AS (…), …`, placed before the key's own. */
  ctes: Prisma.Sql;
  /**
   * Conditions over those CTEs that must all hold, else nothing of the statement commits. One
   * marked `fenced` means another attempt got there first (the payment is no longer pending,
   * say): it fails like a lost fence, as a LeaseLostError, not as an unexpected error.
   */
  requires: { condition: Prisma.Sql; reason: string; fenced?: boolean }[];
}

const FENCE_LOST = "idempotency key fenced";

/**
 * The business writes and the key's completion as one statement, committed on its own (no
 * BEGIN, no COMMIT): the final phase in one round trip. A lost fence or a failed requirement
 * raises inside the statement, so it commits nothing. Returns false when the fence was lost.
 */
export async function completeKeyWith(
  prisma: Db,
  id: bigint,
  fence: number,
  status: number,
  body: string,
  writes: StatementWrites,
): Promise<boolean> {
  try {
    await rawQuery(prisma, completionStatement(id, fence, status, body, writes));
    return true;
  } catch (error) {
    if (error instanceof Error && error.message.includes(`requirement failed: ${FENCE_LOST}`)) return false;
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
): Prisma.Sql {
  const checks = writes.requires.map(
    (r) =>
      Prisma.sql`statement_require(${r.condition}, ${r.fenced ? `${FENCE_LOST}: ${r.reason}` : r.reason})`,
  );
  return Prisma.sql`
      WITH ${writes.ctes}, done AS (
        UPDATE idempotency_keys
           SET state = 'completed', response_status = ${status}, response_body = ${body}::json,
               completed_at = now(), updated_at = now(), locked_until = NULL, last_error = NULL,
               -- A full TTL from completion, as completeKey.
               expires_at = now() + (expires_at - created_at)
         WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
        RETURNING id, fence
      )
      SELECT ${Prisma.join([Prisma.sql`statement_require((SELECT count(*) FROM done) = 1, ${FENCE_LOST})`, ...checks], " AND ")} AS ok`;
}

/** Records a recovery point and renews the lease, in the phase's transaction; fenced like completion. */
export async function recordProgress(tx: Tx, id: bigint, fence: number, recoveryPoint: string) {
  const rows = await tx.$queryRaw<{ n: number }[]>`
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
    SELECT count(*)::int AS n FROM moved`;
  return (rows[0]?.n ?? 0) === 1;
}

/**
 * Renews the lease of a long-running owner; false means the key was taken over or released (a
 * renewal racing the release must not lock the key again).
 */
export async function renewLease(prisma: Db, id: bigint, fence: number): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => lease_seconds)
     WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress' AND locked_until IS NOT NULL`;
  return n === 1;
}

/**
 * Gives the key back after an unexpected error, so the retry may take it over at once; with
 * holdSeconds, keeps it that long first (the outcome may change by then: a duplicate inside the
 * window is told 409, not handed the key).
 */
export async function releaseKey(
  prisma: Db,
  id: bigint,
  fence: number,
  reason: string,
  holdSeconds?: number,
): Promise<boolean> {
  const why = reason.slice(0, 500);
  const rows = await prisma.$queryRaw<{ n: number }[]>`
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
    SELECT count(*)::int AS n FROM released`;
  return (rows[0]?.n ?? 0) === 1;
}

/**
 * Takes back a fresh claim whose request was refused before its work began: `undo` removes what
 * the first phase wrote, and the key returns to "started", free, in the same transaction, so the
 * refusal leaves no work behind and the same key may be sent again. Fenced: false (and nothing
 * undone) when another attempt holds the key.
 */
export async function withdrawClaim(
  prisma: Db,
  id: bigint,
  fence: number,
  reason: string,
  undo: (tx: Tx) => Promise<unknown>,
): Promise<boolean> {
  const why = reason.slice(0, 500);
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ n: number }[]>`
      WITH withdrawn AS (
        UPDATE idempotency_keys
           SET recovery_point = 'started', locked_until = NULL, updated_at = now(), last_error = ${why}
         WHERE id = ${id} AND fence = ${fence} AND state = 'in_progress'
        RETURNING id, fence
      ), ev AS (
        INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
        SELECT id, 'refused', fence, ${why} FROM withdrawn
      )
      SELECT count(*)::int AS n FROM withdrawn`;
    if ((rows[0]?.n ?? 0) !== 1) return false;
    await undo(tx);
    return true;
  });
}

export async function recordFenced(prisma: Db, id: bigint, fence: number): Promise<void> {
  await recordKeyEvent(prisma, id, "fenced", null, fence);
}

/** A line in the key's history; the fence defaults to the key's current one. */
export async function recordKeyEvent(
  prisma: Db,
  id: bigint,
  kind: string,
  detail: string | null,
  fence?: number,
): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
    SELECT id, ${kind}, coalesce(${fence ?? null}::int, fence), ${detail} FROM idempotency_keys WHERE id = ${id}`;
}
