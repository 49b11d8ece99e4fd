import type { Db } from "../db";
import { LIMIT_RULES, tally } from "../limits";
import { addressGroup } from "./client-address";
import { type AdminChannel, recordAdminRefusal } from "./refusals";
import { hashToken, safeEqual } from "./tokens";

export type AdminTokenCheck = { ok: true } | { ok: false; retryAfterSeconds?: number };

/**
 * Compares a presented secret (ADMIN_TOKEN, or METRICS_TOKEN at /api/metrics) with each of
 * `expected` in constant time, both sides hashed first so not even the length leaks; then one
 * atomic statement on the address's count (an IPv6 address by its /64) decides, in the order the
 * database serialises the tries: a wrong secret adds one and is answered "wrong" while it is
 * within the ten, a right one adds nothing and is accepted only while fewer than ten wrong ones
 * came before it. A parallel burst thus gets exactly what a sequence gets, and legitimate
 * parallel calls with the right token are never refused for each other (decisions 0063, 0146).
 * Both paths send the same statement, so the time does not tell a right guess from a wrong one.
 * Refusals go to the audit log (decision 0148).
 */
export async function checkSecretFrom(
  prisma: Db,
  candidate: string,
  expected: string | readonly (string | undefined)[],
  from: { address: string; channel: AdminChannel },
): Promise<AdminTokenCheck> {
  const rule = LIMIT_RULES.adminTokenFailuresByAddress;
  const given = hashToken(candidate);
  const secrets = (typeof expected === "string" ? [expected] : expected).filter((s): s is string => !!s);
  // Every secret compared, so the time does not tell which one matched.
  const matched = secrets.map((s) => safeEqual(given, hashToken(s))).includes(true);
  const { spent, retryAfterSeconds } = await tally(rule, addressGroup(from.address), matched ? 0 : 1);
  if (matched && spent < rule.points) return { ok: true };
  if (!matched && spent <= rule.points) {
    await recordAdminRefusal(prisma, { ...from, outcome: "wrong token" });
    return { ok: false };
  }
  const firstThrottle = !matched && spent === rule.points + 1;
  await recordAdminRefusal(prisma, { ...from, outcome: "throttled", firstThrottle });
  return { ok: false, retryAfterSeconds };
}
