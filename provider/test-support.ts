/**
 * Helpers for the simulator's tests (not a test file itself). The tests talk to the simulator
 * process with the official `stripe` SDK, as an integration would; they share the payment_provider
 * schema, so every test uses fresh random idempotency keys and metadata, and nothing is truncated.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import Stripe from "stripe";
import { TEST_PROVIDER_KEY } from "./auth";

/** The Authorization header of a development client (any sk_test_ key). */
export const TEST_AUTH = { authorization: `Bearer ${TEST_PROVIDER_KEY}` };

/** The simulator is a service of its own: it connects to the server directly, never via the app's pooler. */
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

/** The official SDK pointed at the simulator; no retries unless asked. */
export function sdk(
  baseUrl: string,
  opts: { key?: string; maxNetworkRetries?: number; timeout?: number } = {},
) {
  const url = new URL(baseUrl);
  return new Stripe(opts.key ?? TEST_PROVIDER_KEY, {
    host: url.hostname,
    port: url.port,
    protocol: "http",
    maxNetworkRetries: opts.maxNetworkRetries ?? 0,
    timeout: opts.timeout ?? 10_000,
    telemetry: false,
  });
}

/** A visa payment created and confirmed at once, with a unique key and the given metadata. */
export const visa = { amount: 1999, currency: "usd", payment_method: "pm_card_visa", confirm: true } as const;

/** What the SDK throws: its fields, read without its classes. */
export interface SdkError {
  type: string;
  rawType?: string;
  statusCode?: number;
  code?: string;
  decline_code?: string;
  param?: string;
  headers: Record<string, string>;
  payment_intent?: Stripe.PaymentIntent;
  detail?: { code?: string };
}

/** The error a call throws (fails the test if it does not). */
export async function failureOf(call: Promise<unknown>): Promise<SdkError> {
  try {
    await call;
  } catch (err) {
    return err as SdkError;
  }
  throw new Error("expected the call to fail");
}

/** A raw request, for what the SDK never sends (no key, a malformed body). */
export async function raw(
  baseUrl: string,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      ...(init.body !== undefined && { "content-type": "application/x-www-form-urlencoded" }),
      ...init.headers,
    },
    body: init.body,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Direct database access, to check what the simulator really stored. */
export function openDb() {
  const pool = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
  const count = async (sql: string, params: unknown[]) =>
    (await pool.query<{ n: number }>(sql, params)).rows[0]?.n ?? 0;
  return {
    /** PaymentIntents whose metadata holds `tag=<value>`. */
    intentsTagged: (tag: string) =>
      count("SELECT count(*)::int AS n FROM payment_provider.payment_intents WHERE metadata @> $1", [
        JSON.stringify({ tag }),
      ]),
    /** The refunds a PaymentIntent has, their sum, and what its charge's row keeps. */
    async refundsOf(paymentIntent: string) {
      const result = await pool.query<{ count: number; sum: string; amount_refunded: string }>(
        `SELECT (SELECT count(*)::int FROM payment_provider.refunds r WHERE r.payment_intent = c.payment_intent) AS count,
                (SELECT coalesce(sum(amount), 0) FROM payment_provider.refunds r WHERE r.payment_intent = c.payment_intent) AS sum,
                c.amount_refunded
           FROM payment_provider.charges c
          WHERE c.payment_intent = $1 AND (c.object->>'status') = 'succeeded'`,
        [paymentIntent],
      );
      const row = result.rows[0];
      if (!row) throw new Error(`no succeeded charge for ${paymentIntent}`);
      return { count: row.count, sum: Number(row.sum), amountRefunded: Number(row.amount_refunded) };
    },
    /** The types of the events recorded for an object, oldest first. */
    async eventTypes(objectId: string): Promise<string[]> {
      const result = await pool.query<{ type: string }>(
        "SELECT type FROM payment_provider.events WHERE object_id = $1 ORDER BY created, id",
        [objectId],
      );
      return result.rows.map((r) => r.type);
    },
    /** The charges of a PaymentIntent: how many, and how many succeeded. */
    async chargesOf(paymentIntent: string) {
      const result = await pool.query<{ all: number; succeeded: number }>(
        `SELECT count(*)::int AS all, count(*) FILTER (WHERE object->>'status' = 'succeeded')::int AS succeeded
           FROM payment_provider.charges WHERE payment_intent = $1`,
        [paymentIntent],
      );
      return result.rows[0] ?? { all: 0, succeeded: 0 };
    },
    close: () => pool.end(),
  };
}
