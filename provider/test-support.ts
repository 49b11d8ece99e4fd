/**
 * Helpers for the provider tests (not a test file itself). Tests share the
 * payment_provider schema, so every test uses fresh random idempotency keys and
 * nothing is ever truncated.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { TEST_PROVIDER_KEY } from "./auth";

/** The Authorization header of a development client (any sk_test_ key). */
export const TEST_AUTH = { authorization: `Bearer ${TEST_PROVIDER_KEY}` };

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
export function postCharge(baseUrl: string, body: unknown, headers: Record<string, string> = {}) {
  return post(`${baseUrl}/v1/charges`, body, headers);
}

/** POST /v1/refunds without the client. */
export function postRefund(baseUrl: string, body: unknown, headers: Record<string, string> = {}) {
  return post(`${baseUrl}/v1/refunds`, body, headers);
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...TEST_AUTH, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Direct database access, to check what the provider really stored. */
export function openDb(): {
  countCharges(key: string): Promise<number>;
  /** The refunds a charge has, and the sum its row keeps. */
  refundsOf(charge: string): Promise<{ count: number; sum: number; amountRefunded: number }>;
  close(): Promise<void>;
} {
  const pool = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
  return {
    async countCharges(key) {
      const result = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM payment_provider.charges WHERE idempotency_key = $1",
        [key],
      );
      return result.rows[0]?.n ?? 0;
    },
    async refundsOf(charge) {
      const result = await pool.query<{ count: number; sum: string; amount_refunded: string }>(
        `SELECT (SELECT count(*)::int FROM payment_provider.refunds WHERE charge_id = c.id) AS count,
                (SELECT coalesce(sum(amount), 0) FROM payment_provider.refunds WHERE charge_id = c.id) AS sum,
                c.amount_refunded
           FROM payment_provider.charges c WHERE c.id = $1`,
        [charge],
      );
      const row = result.rows[0];
      if (!row) throw new Error(`no charge ${charge}`);
      return { count: row.count, sum: Number(row.sum), amountRefunded: Number(row.amount_refunded) };
    },
    close: () => pool.end(),
  };
}
