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
  /**
   * Wrong passwords for one email from one address, counted for a day: past a few, each further
   * try waits longer (signInDelaySeconds). Per pair, so nobody elsewhere can lock a shopper out.
   */
  signInFailuresByPair: { name: "signin_pair", points: 1_000_000, durationSeconds: 24 * 60 * 60 },
  /** The wait the last failure of a pair imposed (set with `block`, never consumed). */
  signInWaitByPair: { name: "signin_wait", points: 1, durationSeconds: 1 },
  /** Wrong passwords from one address, for any email: stops spraying many accounts. */
  signInFailuresByAddress: { name: "signin_ip", points: 50, durationSeconds: 60 * 60 },
  signUpsByAddress: { name: "signup_ip", points: 20, durationSeconds: 60 * 60 },
  /** Wrong admin (or metrics) tokens from one address: then even the right one waits. */
  adminTokenFailuresByAddress: { name: "admin_token_ip", points: 10, durationSeconds: 15 * 60 },
  ordersByAccount: { name: "orders", points: env.RATE_LIMIT_ORDERS_PER_MINUTE, durationSeconds: 60 },
  paymentsByAccount: { name: "payments", points: env.RATE_LIMIT_PAYMENTS_PER_MINUTE, durationSeconds: 60 },
} satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof LIMIT_RULES;

export type LimitCheck = { ok: true } | { ok: false; retryAfterSeconds: number };

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
    if (isRefusal(error)) return { ok: false, retryAfterSeconds: retryAfter(error) };
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
 * Spends one point of `subject`'s allowance even past the limit, and says how many it has spent
 * in the current window (a count of failures, not a gate).
 */
export async function count(rule: LimitRule, subject: string): Promise<number> {
  try {
    return (await limiterFor(rule).penalty(subject, 1)).consumedPoints;
  } catch (error) {
    if (isRefusal(error)) return error.consumedPoints;
    throw error;
  }
}

/** Refuses `subject` for `seconds` (a wait one rule imposes from another's count). */
export async function block(rule: LimitRule, subject: string, seconds: number): Promise<void> {
  await limiterFor(rule).block(subject, seconds);
}

/** Seconds until `subject` may try again when its allowance is spent (or blocked), else null; spends nothing. */
export async function blockedFor(rule: LimitRule, subject: string): Promise<number | null> {
  const res = await limiterFor(rule).get(subject);
  if (!res || res.consumedPoints < rule.points || res.msBeforeNext <= 0) return null;
  return retryAfter(res);
}
