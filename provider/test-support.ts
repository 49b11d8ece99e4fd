/**
 * Helpers for the provider tests (not a test file itself). Tests share the
 * payment_provider schema, so every test uses fresh random idempotency keys and
 * nothing is ever truncated.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";

/** The provider is a service of its own: it connects to the server directly, never via the app's pooler. */
export function databaseUrl(): string {
  const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!url)
    throw new Error(
      "Set DATABASE_URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres) to run the provider tests",
    );
  return url;
}

export function uniqueKey(label: string): string {
  return `test-${label}-${randomUUID()}`;
}

export const visa = { amount: 1999, currency: "usd", payment_method: "pm_card_visa" } as const;

export interface RawAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST /v1/charges without the client, to look at statuses and headers. */
export async function postCharge(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const res = await fetch(`${baseUrl}/v1/charges`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Direct database access, to check what the provider really stored. */
export function openDb(): { countCharges(key: string): Promise<number>; close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
  return {
    async countCharges(key) {
      const result = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM payment_provider.charges WHERE idempotency_key = $1",
        [key],
      );
      return result.rows[0]?.n ?? 0;
    },
    close: () => pool.end(),
  };
}
