import { counters } from "./counters.js";
import type { KeyDb } from "./db.js";
import { IDEMPOTENCY_DEFAULTS } from "./middleware.js";
import { KeyOwner } from "./owner.js";
import { raw, sql } from "./sql.js";
import { takeOverKey } from "./store.js";

export interface AbandonedKey<TTx = unknown> {
  owner: KeyOwner<TTx>;
  accountId: string;
  requestParams: unknown;
  leaseSeconds: number;
  /** When the key was claimed: the Pay press, for a payment. */
  createdAt: Date;
}

export interface AbandonedCandidate {
  id: bigint;
  fence: number;
  accountId: string;
  key: string;
  requestParams: unknown;
  leaseSeconds: number;
  createdAt: Date;
  /** Where the key's attempts got to: "started" when none began its work. */
  recoveryPoint: string;
}

/** The completer's schedule: it never gives up, it only waits longer, up to a cap. */
export interface RecoveryBackoff {
  /** Idle time before the first try, doubled with each of the completer's own failures. */
  idleSeconds: number;
  /** The longest wait between two tries. */
  maxSeconds: number;
}

export const DEFAULT_BACKOFF: RecoveryBackoff = { idleSeconds: 5, maxSeconds: 300 };

export function backoffSeconds(b: RecoveryBackoff, completerAttempts: number): number {
  return Math.min(b.maxSeconds, b.idleSeconds * 2 ** Math.min(Math.max(completerAttempts - 1, 0), 20));
}

const CANDIDATE_COLUMNS =
  raw(`id, fence, account_id::text AS "accountId", key, request_params AS "requestParams",
  lease_seconds AS "leaseSeconds", created_at AS "createdAt", recovery_point AS "recoveryPoint"`);

const candidate = (r: AbandonedCandidate): AbandonedCandidate => ({ ...r, id: BigInt(r.id) });

/**
 * Unfinished keys of one procedure whose attempt stopped: no live lease, past the given recovery
 * points, idle for a moment (the client gets the first chance), and due by the completer's own
 * backoff. Client takeovers never push a key out of reach: the completer counts its own tries.
 */
export async function findAbandonedKeys(
  db: KeyDb<unknown>,
  opts: { procedure: string; skipRecoveryPoints?: string[]; idleSeconds?: number; limit?: number },
): Promise<AbandonedCandidate[]> {
  const idle = opts.idleSeconds ?? DEFAULT_BACKOFF.idleSeconds;
  const rows = await db.query<AbandonedCandidate>(sql`SELECT ${CANDIDATE_COLUMNS}
       FROM idempotency_keys
      WHERE state = 'in_progress' AND procedure = ${opts.procedure}
        AND (locked_until IS NULL OR locked_until <= now())
        AND updated_at <= now() - make_interval(secs => ${idle})
        AND (next_recovery_at IS NULL OR next_recovery_at <= now())
        AND NOT (recovery_point = ANY(${opts.skipRecoveryPoints ?? []}::text[]))
      ORDER BY coalesce(next_recovery_at, updated_at)
      LIMIT ${opts.limit ?? 20}`);
  return rows.map(candidate);
}

/** One unfinished key by id, whatever its schedule: an operator's re-drive. Null when finished. */
export async function findUnfinishedKey(db: KeyDb<unknown>, id: bigint): Promise<AbandonedCandidate | null> {
  const rows = await db.query<AbandonedCandidate>(
    sql`SELECT ${CANDIDATE_COLUMNS} FROM idempotency_keys WHERE id = ${id} AND state = 'in_progress'`,
  );
  return rows[0] ? candidate(rows[0]) : null;
}

/**
 * Takes one candidate over with the same fenced conditional UPDATE a retrying client uses, just
 * before driving it, so several completers (and clients) can run at once. Null when another won
 * or the key's lease is live. The take counts as one of the completer's attempts.
 */
export async function takeOverAbandoned<TTx>(
  db: KeyDb<TTx>,
  c: AbandonedCandidate,
  backoff: RecoveryBackoff = DEFAULT_BACKOFF,
): Promise<AbandonedKey<TTx> | null> {
  const won = await takeOverKey(db, c.id, c.fence, c.leaseSeconds, {
    by: "completer",
    backoffSeconds: (n) => backoffSeconds(backoff, n),
  });
  if (!won) return null;
  counters.increment("lease_takeover");
  return {
    owner: new KeyOwner<TTx>(
      db,
      c.id,
      won.fence,
      won.recoveryPoint,
      `${c.accountId}\n${c.key}`,
      IDEMPOTENCY_DEFAULTS.transactionTimeoutMs,
    ),
    accountId: c.accountId,
    requestParams: c.requestParams,
    leaseSeconds: c.leaseSeconds,
    createdAt: c.createdAt,
  };
}

/** How much work waits for the completer: unfinished keys past the given recovery points, lease run out. */
export async function abandonedKeyStats(
  db: KeyDb<unknown>,
  opts: { procedure: string; skipRecoveryPoints?: string[] },
): Promise<{ waiting: number; oldestIdleSeconds: number }> {
  const [row] = await db.query<{ waiting: number; oldest: number | null }>(sql`
    SELECT count(*)::int AS waiting, extract(epoch FROM now() - min(updated_at))::float8 AS oldest
      FROM idempotency_keys
     WHERE state = 'in_progress' AND procedure = ${opts.procedure}
       AND (locked_until IS NULL OR locked_until <= now())
       AND NOT (recovery_point = ANY(${opts.skipRecoveryPoints ?? []}::text[]))`);
  return { waiting: row?.waiting ?? 0, oldestIdleSeconds: Math.max(0, Math.floor(row?.oldest ?? 0)) };
}
