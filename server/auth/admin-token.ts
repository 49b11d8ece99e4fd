import { blockedFor, count, LIMIT_RULES } from "../limits";
import { hashToken, safeEqual } from "./tokens";

export type AdminTokenCheck = { ok: true } | { ok: false; retryAfterSeconds?: number };

/**
 * Compares a presented secret (ADMIN_TOKEN, or METRICS_TOKEN at /api/metrics) in constant time,
 * both sides hashed first so not even the length leaks. An address with too many wrong tries is
 * refused for a while, the right secret included, so guessing costs time (decision 0063). The
 * limiter is read only here, on the admin's paths, never on a customer's request.
 */
export async function checkSecretFrom(
  candidate: string,
  expected: string,
  address: string,
): Promise<AdminTokenCheck> {
  const rule = LIMIT_RULES.adminTokenFailuresByAddress;
  const wait = await blockedFor(rule, address);
  if (wait !== null) return { ok: false, retryAfterSeconds: wait };
  if (safeEqual(hashToken(candidate), hashToken(expected))) return { ok: true };
  await recordWrongSecret(address);
  return { ok: false };
}

/** One more wrong admin or metrics secret from this address. */
export async function recordWrongSecret(address: string): Promise<void> {
  await count(LIMIT_RULES.adminTokenFailuresByAddress, address);
}
