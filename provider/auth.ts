/**
 * Who may call /v1 (decision 0150), as Stripe: `Authorization: Bearer sk_…`. With a configured
 * secret only that key; without one (development, tests) any `sk_test_` key, so a client needs no
 * shared configuration, yet a call without a key is refused everywhere.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** The key the app's client sends when none is configured. */
export const TEST_PROVIDER_KEY = "sk_test_checkout_simulator";

const TEST_KEY = /^sk_test_[A-Za-z0-9_-]{1,200}$/;

export type ProviderAuth = { kind: "secret"; digest: Buffer } | { kind: "test-keys" };

export function providerAuth(secret: string | undefined): ProviderAuth {
  return secret ? { kind: "secret", digest: sha256(secret) } : { kind: "test-keys" };
}

/** The Bearer value of an Authorization header; the scheme is case-insensitive (RFC 9110). */
export function bearer(authorization: string | undefined): string | undefined {
  return /^bearer +(\S+)\s*$/i.exec(authorization ?? "")?.[1];
}

export function authorizedBy(auth: ProviderAuth, authorization: string | undefined): boolean {
  const key = bearer(authorization);
  if (key === undefined) return false;
  if (auth.kind === "test-keys") return TEST_KEY.test(key);
  return timingSafeEqual(sha256(key), auth.digest);
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
