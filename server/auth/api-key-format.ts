// The shape of an API key: `sk_live_` in production, `sk_test_` elsewhere, then 43 characters of
// base64url (32 random bytes). Demo and test fixtures use shorter `sk_test_` values.

export const API_KEY_SCOPES = ["payments", "read_only"] as const;
/** `payments`: orders and payments, and reading them; `read_only`: queries only. */
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export function apiKeyPrefix(production: boolean): "sk_live_" | "sk_test_" {
  return production ? "sk_live_" : "sk_test_";
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith("sk_live_") || token.startsWith("sk_test_");
}

export function isTestKey(token: string): boolean {
  return token.startsWith("sk_test_");
}
