import type { Db, Tx } from "../db";

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
 * The claim: one statement that inserts the key (ON CONFLICT DO NOTHING — the database picks the
 * winner) or, when it exists, returns the existing row, so every outcome costs one round trip.
 * Under a concurrent insert the fallback SELECT can miss a row committed after the statement's
 * snapshot; the caller then simply runs it again.
 */
export async function claimKey(prisma: Db | Tx, p: ClaimParams): Promise<KeyRow | undefined> {
  const rows = await prisma.$queryRaw<KeyRow[]>`
    WITH ins AS (
      INSERT INTO idempotency_keys
        (account_id, key, procedure, fingerprint, request_params, lease_seconds, locked_until, expires_at)
      VALUES (${p.accountId}::uuid, ${p.key}, ${p.procedure}, ${p.fingerprint},
              ${JSON.stringify(p.requestParams)}::jsonb, ${p.leaseSeconds},
              now() + make_interval(secs => ${p.leaseSeconds}), now() + make_interval(secs => ${p.ttlSeconds}))
      ON CONFLICT (account_id, key) DO NOTHING
      RETURNING *
    ), ev AS (
      INSERT INTO idempotency_key_events (key_id, kind, fence) SELECT id, 'claimed', fence FROM ins
    )
    SELECT true AS inserted, id, fingerprint, state, recovery_point AS "recoveryPoint", fence,
           response_status AS "responseStatus", response_body::text AS "responseBody",
           true AS "leaseLive", false AS expired
      FROM ins
    UNION ALL
    SELECT false, id, fingerprint, state, recovery_point, fence, response_status, response_body::text,
           coalesce(locked_until > now(), false), expires_at <= now()
      FROM idempotency_keys
     WHERE account_id = ${p.accountId}::uuid AND key = ${p.key} AND NOT EXISTS (SELECT 1 FROM ins)`;
  return rows[0];
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
    ), ev AS (
      INSERT INTO idempotency_key_events (key_id, kind, fence, detail)
      SELECT id, 'completed', fence, ${String(status)} FROM done
    )
    SELECT count(*)::int AS n FROM done`;
  return (rows[0]?.n ?? 0) === 1;
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
