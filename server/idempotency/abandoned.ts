import type { Db } from "../db";
import { counters } from "./counters";
import { IDEMPOTENCY_DEFAULTS } from "./middleware";
import { KeyOwner } from "./owner";
import { takeOverKey } from "./store";

export interface AbandonedKey {
  owner: KeyOwner;
  accountId: string;
  requestParams: unknown;
  leaseSeconds: number;
}

export interface AbandonedCandidate {
  id: bigint;
  fence: number;
  accountId: string;
  key: string;
  requestParams: unknown;
  leaseSeconds: number;
}

/** After this many attempts a key is left for an operator (it shows as abandoned on the admin page). */
export const MAX_ATTEMPTS = 12;

/**
 * Keys of one procedure whose attempt stopped mid-way: in progress, lease run out (or released),
 * past the given recovery points, and idle for a while that doubles with every attempt, so a key
 * that keeps failing is retried ever more slowly and, after MAX_ATTEMPTS, not at all.
 */
export async function findAbandonedKeys(
  prisma: Db,
  opts: { procedure: string; skipRecoveryPoints?: string[]; idleSeconds?: number; limit?: number },
): Promise<AbandonedCandidate[]> {
  const idle = opts.idleSeconds ?? 5;
  return prisma.$queryRaw<AbandonedCandidate[]>`
    SELECT id, fence, account_id::text AS "accountId", key, request_params AS "requestParams",
           lease_seconds AS "leaseSeconds"
      FROM idempotency_keys
     WHERE state = 'in_progress' AND procedure = ${opts.procedure}
       AND (locked_until IS NULL OR locked_until <= now())
       AND attempts < ${MAX_ATTEMPTS}
       AND updated_at <= now() - make_interval(secs => ${idle} * power(2, least(attempts - 1, 8)))
       AND NOT (recovery_point = ANY(${opts.skipRecoveryPoints ?? []}::text[]))
     ORDER BY updated_at
     LIMIT ${opts.limit ?? 20}`;
}

/**
 * Takes one candidate over with the same fenced conditional UPDATE a retrying client uses, just
 * before driving it, so several completers (and clients) can run at once. Null when another won.
 */
export async function takeOverAbandoned(prisma: Db, c: AbandonedCandidate): Promise<AbandonedKey | null> {
  const won = await takeOverKey(prisma, c.id, c.fence, c.leaseSeconds);
  if (!won) return null;
  counters.increment("lease_takeover");
  return {
    owner: new KeyOwner(
      prisma,
      c.id,
      won.fence,
      won.recoveryPoint,
      `${c.accountId}\n${c.key}`,
      IDEMPOTENCY_DEFAULTS.transactionTimeoutMs,
    ),
    accountId: c.accountId,
    requestParams: c.requestParams,
    leaseSeconds: c.leaseSeconds,
  };
}

/** How much work waits for the completer: unfinished keys past the given recovery points, lease run out. */
export async function abandonedKeyStats(
  prisma: Db,
  opts: { procedure: string; skipRecoveryPoints?: string[] },
): Promise<{ waiting: number; oldestIdleSeconds: number }> {
  const [row] = await prisma.$queryRaw<{ waiting: number; oldest: number | null }[]>`
    SELECT count(*)::int AS waiting, extract(epoch FROM now() - min(updated_at))::float8 AS oldest
      FROM idempotency_keys
     WHERE state = 'in_progress' AND procedure = ${opts.procedure}
       AND (locked_until IS NULL OR locked_until <= now())
       AND NOT (recovery_point = ANY(${opts.skipRecoveryPoints ?? []}::text[]))`;
  return { waiting: row?.waiting ?? 0, oldestIdleSeconds: Math.max(0, Math.floor(row?.oldest ?? 0)) };
}
