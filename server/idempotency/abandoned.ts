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

/**
 * Takes over keys of one procedure whose attempt stopped mid-way: in progress, lease run out (or
 * released), idle for a while, and past the given recovery points. Each takeover is the same
 * fenced conditional UPDATE a retrying client uses, so several completers can run at once.
 */
export async function takeOverAbandonedKeys(
  prisma: Db,
  opts: { procedure: string; skipRecoveryPoints?: string[]; idleSeconds?: number; limit?: number },
): Promise<AbandonedKey[]> {
  const candidates = await prisma.$queryRaw<
    {
      id: bigint;
      fence: number;
      account_id: string;
      key: string;
      request_params: unknown;
      lease_seconds: number;
    }[]
  >`
    SELECT id, fence, account_id::text, key, request_params, lease_seconds FROM idempotency_keys
     WHERE state = 'in_progress' AND procedure = ${opts.procedure}
       AND (locked_until IS NULL OR locked_until <= now())
       AND updated_at <= now() - make_interval(secs => ${opts.idleSeconds ?? 5})
       AND NOT (recovery_point = ANY(${opts.skipRecoveryPoints ?? []}::text[]))
     ORDER BY updated_at
     LIMIT ${opts.limit ?? 20}`;
  const taken: AbandonedKey[] = [];
  for (const c of candidates) {
    const won = await takeOverKey(prisma, c.id, c.fence, c.lease_seconds);
    if (!won) continue;
    counters.increment("lease_takeover");
    taken.push({
      owner: new KeyOwner(
        prisma,
        c.id,
        won.fence,
        won.recoveryPoint,
        `${c.account_id}\n${c.key}`,
        IDEMPOTENCY_DEFAULTS.transactionTimeoutMs,
      ),
      accountId: c.account_id,
      requestParams: c.request_params,
      leaseSeconds: c.lease_seconds,
    });
  }
  return taken;
}
