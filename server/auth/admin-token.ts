import type { Db } from "../db";
import { consume, LIMIT_RULES, refund } from "../limits";
import { addressGroup } from "./client-address";
import { type AdminChannel, recordAdminRefusal } from "./refusals";
import { hashToken, safeEqual } from "./tokens";

export type AdminTokenCheck = { ok: true } | { ok: false; retryAfterSeconds?: number };

/**
 * Compares a presented secret (ADMIN_TOKEN, or METRICS_TOKEN at /api/metrics) with each of
 * `expected` in constant time, both sides hashed first so not even the length leaks. The try is
 * counted against its address (an IPv6 one by its /64) before the comparison, in one atomic
 * statement, and given back when right: a parallel burst gets exactly the ten wrong tries a
 * sequence gets, and past them even the right secret waits (decisions 0063, 0146). Refusals go
 * to the audit log (decision 0148). The limiter is read only on the admin's paths.
 */
export async function checkSecretFrom(
  prisma: Db,
  candidate: string,
  expected: string | readonly (string | undefined)[],
  from: { address: string; channel: AdminChannel },
): Promise<AdminTokenCheck> {
  const rule = LIMIT_RULES.adminTokenFailuresByAddress;
  const group = addressGroup(from.address);
  const reserved = await consume(rule, group);
  if (!reserved.ok) {
    await recordAdminRefusal(prisma, {
      ...from,
      outcome: "throttled",
      firstThrottle: reserved.spent === rule.points + 1,
    });
    return { ok: false, retryAfterSeconds: reserved.retryAfterSeconds };
  }
  const given = hashToken(candidate);
  const secrets = (typeof expected === "string" ? [expected] : expected).filter((s): s is string => !!s);
  // Every secret compared, so the time does not tell which one matched.
  const matched = secrets.map((s) => safeEqual(given, hashToken(s))).includes(true);
  if (matched) {
    await refund(rule, group);
    return { ok: true };
  }
  await recordAdminRefusal(prisma, { ...from, outcome: "wrong token" });
  return { ok: false };
}
