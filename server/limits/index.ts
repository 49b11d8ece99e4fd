import type pg from "pg";
import { RateLimiterPostgres, type RateLimiterRes } from "rate-limiter-flexible";
import { createPool, preparedStatementsOn, SERVER_IDLE_CONNECTION_MS } from "../db";
import { env, requireDatabaseUrl } from "../env";

// Abuse limits whose counters live in PostgreSQL (rate-limiter-flexible's table `rate_limits`),
// so every instance of the app counts against the same numbers. docs/decisions/0026.

export interface LimitRule {
  /** Distinguishes this rule's counters from the others' in the shared table. */
  name: string;
  points: number;
  durationSeconds: number;
}

export const LIMIT_RULES = {
  /** Wrong passwords from one address, for any email: stops spraying many accounts. */
  signInFailuresByAddress: { name: "signin_ip", points: 50, durationSeconds: 60 * 60 },
  signUpsByAddress: { name: "signup_ip", points: 20, durationSeconds: 60 * 60 },
  /**
   * Wrong admin (or metrics) tokens from one address, counted in one statement with the decision
   * on each try: past ten even the right one waits (decision 0146).
   */
  adminTokenFailuresByAddress: { name: "admin_token_ip", points: 10, durationSeconds: 15 * 60 },
  /** Refused admin credentials written to the audit log, per address and in all: never a flood. */
  auditedRefusalsByAddress: { name: "audit_refusals_ip", points: 20, durationSeconds: 15 * 60 },
  auditedRefusals: { name: "audit_refusals", points: 500, durationSeconds: 15 * 60 },
  ordersByAccount: { name: "orders", points: env.RATE_LIMIT_ORDERS_PER_MINUTE, durationSeconds: 60 },
  paymentsByAccount: { name: "payments", points: env.RATE_LIMIT_PAYMENTS_PER_MINUTE, durationSeconds: 60 },
} satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof LIMIT_RULES;

/** `spent`: the points asked for in this window, this one included (one past the limit: the first refusal). */
export type LimitCheck = { ok: true } | { ok: false; retryAfterSeconds: number; spent: number };

interface LimitStore {
  pool: pg.Pool;
  /** Statements sent by name (prepared once per connection), or unnamed for PgBouncer. */
  named: boolean;
}
const holder = globalThis as unknown as {
  limitStore?: LimitStore;
  limiters?: Map<string, RateLimiterPostgres>;
};

function limitStore(): LimitStore {
  holder.limitStore ??= {
    pool: createPool(requireDatabaseUrl(), 3, SERVER_IDLE_CONNECTION_MS),
    named: preparedStatementsOn(),
  };
  return holder.limitStore;
}

/**
 * The limiters' statements go through `pool` until the returned function is called (the cost
 * test counts them among a payment's round trips). `named` defaults to the server's setting.
 */
export function sendLimitsThrough(pool: pg.Pool, opts: { named?: boolean } = {}): () => void {
  const previous = holder.limitStore;
  holder.limitStore = { pool, named: opts.named ?? preparedStatementsOn() };
  return () => {
    holder.limitStore = previous;
  };
}

function limiterFor(rule: LimitRule): RateLimiterPostgres {
  holder.limiters ??= new Map();
  const id = `${rule.name}:${rule.points}:${rule.durationSeconds}`;
  let limiter = holder.limiters.get(id);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: limiterStatements(),
      storeType: "pool",
      tableName: "rate_limits",
      tableCreated: true, // the migration owns the table
      keyPrefix: rule.name,
      points: rule.points,
      duration: rule.durationSeconds,
    });
    holder.limiters.set(id, limiter);
  }
  return limiter;
}

/**
 * The limiter names its prepared statements, which PgBouncer in transaction mode (1.18) cannot
 * follow from one server connection to the next ("prepared statement … already exists"): there
 * the same queries go unnamed. Where the connection is a session of its own
 * (`DATABASE_PREPARED_STATEMENTS=on`, decision 0041) the names are kept, so PostgreSQL parses and
 * plans the upsert once per connection instead of on every payment. With storeType "pool" the
 * limiter only ever calls `query`.
 */
function limiterStatements(): pg.Pool {
  const query = (q: { name?: string; text: string; values?: unknown[] }) => {
    const { pool, named } = limitStore();
    return pool.query(named && q.name ? q : { text: q.text, values: q.values });
  };
  return { query } as unknown as pg.Pool;
}

/**
 * The limiter rejects with a RateLimiterRes once the points are spent, and with an Error when its
 * store fails. Told apart by shape, not class: the limiter on globalThis may have been built by
 * another Next layer's copy of rate-limiter-flexible (docs/decisions/0095).
 */
function isRefusal(value: unknown): value is RateLimiterRes {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as Partial<RateLimiterRes>).msBeforeNext === "number"
  );
}

function retryAfter(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

/** Spends one point of `subject`'s allowance; refused (with when to retry) once it is spent. */
export async function consume(rule: LimitRule, subject: string): Promise<LimitCheck> {
  try {
    await limiterFor(rule).consume(subject);
    return { ok: true };
  } catch (error) {
    if (isRefusal(error))
      return { ok: false, retryAfterSeconds: retryAfter(error), spent: error.consumedPoints };
    throw error;
  }
}

/** Gives back a point spent on something that turned out not to count (a right password). */
export async function refund(rule: LimitRule, subject: string): Promise<void> {
  await limiterFor(rule).reward(subject, 1);
}

/** Forgets `subject`'s count (a correct password clears that email's failures). */
export async function reset(rule: LimitRule, subject: string): Promise<void> {
  await limiterFor(rule).delete(subject);
}

/**
 * Adds `points` (0 reads in the same statement) to `subject`'s count even past the limit: how many
 * it has spent in this window, and when the window ends.
 */
export async function tally(
  rule: LimitRule,
  subject: string,
  points: number,
): Promise<{ spent: number; retryAfterSeconds: number }> {
  const res = await limiterFor(rule).penalty(subject, points);
  return { spent: res.consumedPoints, retryAfterSeconds: retryAfter(res) };
}
