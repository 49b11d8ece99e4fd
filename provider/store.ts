/**
 * Durable storage of the fake payment provider, in its own Postgres schema
 * `payment_provider` (it never reads or writes the app's tables).
 *
 * Idempotency model: a request holds a transaction-scoped advisory lock on its
 * idempotency key while it runs. The charge row and the key row (with the
 * stored response) are inserted in that same transaction, so they commit
 * together or not at all; a crash mid-request leaves no half-finished key
 * behind, and a concurrent duplicate that cannot take the lock is "in flight".
 */
import { createHash, randomBytes } from "node:crypto";
import type { Pool, PoolClient } from "pg";

export const SCHEMA = "payment_provider";

export type ChargeStatus = "succeeded" | "declined";

export interface ChargeRow {
  id: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  status: ChargeStatus;
  failureCode: string | null;
  failureMessage: string | null;
  idempotencyKey: string;
  metadata: Record<string, string>;
  createdAt: Date;
}

export interface NewCharge {
  amount: number;
  currency: string;
  paymentMethod: string;
  status: ChargeStatus;
  failureCode: string | null;
  failureMessage: string | null;
  metadata: Record<string, string>;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type ChargeOnceResult =
  | { kind: "created"; charge: ChargeRow; response: StoredResponse }
  | { kind: "replayed"; response: StoredResponse }
  | { kind: "mismatch" }
  | { kind: "in_flight" };

/** Arbitrary constants: the (int4, int4) advisory-lock key guarding schema creation. */
const SCHEMA_LOCK = [0x70_61_79_70, 1] as const;

const DDL = `
CREATE SCHEMA IF NOT EXISTS ${SCHEMA};

CREATE TABLE IF NOT EXISTS ${SCHEMA}.charges (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^ch_[0-9a-f]+$'),
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  payment_method text NOT NULL,
  status text NOT NULL CHECK (status IN ('succeeded', 'declined')),
  failure_code text,
  failure_message text,
  idempotency_key text NOT NULL,
  request_fingerprint text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  CHECK ((status = 'declined') = (failure_code IS NOT NULL))
);

CREATE INDEX IF NOT EXISTS charges_created_at_id_idx ON ${SCHEMA}.charges (created_at, id);
-- Keys are forgotten after the retention period, like a real provider's: a key reused after it
-- makes a new charge, so a key may name several charges.
ALTER TABLE ${SCHEMA}.charges DROP CONSTRAINT IF EXISTS charges_idempotency_key_key;
CREATE INDEX IF NOT EXISTS charges_idempotency_key_idx ON ${SCHEMA}.charges (idempotency_key);
CREATE INDEX IF NOT EXISTS charges_metadata_idx ON ${SCHEMA}.charges USING gin (metadata jsonb_path_ops);

CREATE TABLE IF NOT EXISTS ${SCHEMA}.idempotency_keys (
  key text PRIMARY KEY,
  request_fingerprint text NOT NULL,
  charge_id text COLLATE "C" NOT NULL UNIQUE REFERENCES ${SCHEMA}.charges (id),
  response_status integer NOT NULL,
  response_body json NOT NULL, -- json, not jsonb: replayed byte for byte
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`;

/** Creates the schema and tables if missing. Safe to run from several processes at once. */
export async function ensureSchema(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [...SCHEMA_LOCK]);
    await client.query(DDL);
    await client.query("COMMIT");
  } catch (err) {
    // A connection whose transaction could not end is dropped, not pooled.
    const ended = await client.query("ROLLBACK").then(
      () => true,
      () => false,
    );
    client.release(!ended);
    throw err;
  }
  client.release();
}

export function newChargeId(): string {
  return `ch_${randomBytes(12).toString("hex")}`;
}

/** A bigint advisory-lock key derived from the idempotency key (64 bits of sha256). */
function keyLockId(key: string): string {
  return createHash("sha256").update(`${SCHEMA}/idempotency/${key}`).digest().readBigInt64BE(0).toString();
}

const CHARGE_COLUMNS =
  "id, amount, currency, payment_method, status, failure_code, failure_message, idempotency_key, metadata, created_at";

interface ChargeDbRow {
  id: string;
  amount: string;
  currency: string;
  payment_method: string;
  status: ChargeStatus;
  failure_code: string | null;
  failure_message: string | null;
  idempotency_key: string;
  metadata: Record<string, string>;
  created_at: Date;
}

function toChargeRow(row: ChargeDbRow): ChargeRow {
  return {
    id: row.id,
    amount: Number(row.amount),
    currency: row.currency,
    paymentMethod: row.payment_method,
    status: row.status,
    failureCode: row.failure_code,
    failureMessage: row.failure_message,
    idempotencyKey: row.idempotency_key,
    metadata: row.metadata,
    createdAt: row.created_at,
  };
}

/**
 * Runs one charge creation exactly once per idempotency key.
 *
 * - another request holds the key right now → `in_flight` (nothing done);
 * - the key completed before → `replayed` with the stored response, or
 *   `mismatch` when the fingerprint of the parameters differs;
 * - otherwise `decide()` runs (it may take time: the key stays locked), and the
 *   charge plus the key row with `render(charge)` commit in one transaction.
 */
export async function createChargeOnce(
  pool: Pool,
  args: {
    key: string;
    fingerprint: string;
    decide: () => Promise<NewCharge>;
    render: (charge: ChargeRow) => StoredResponse;
    /** Keys older than this are forgotten: the request runs as new. Default: kept forever. */
    retentionSeconds?: number;
  },
): Promise<ChargeOnceResult> {
  try {
    // Four round trips for a new charge (BEGIN with the lock, the key's lookup, the charge, the
    // key with COMMIT): each one costs as much as the SQL it carries on a busy machine.
    return await inTransaction(pool, keyLockId(args.key), async (client, commitWith) => {
      // A key past retention is forgotten under the lock, so the request below runs as new. The
      // lookup sees the statement's snapshot, from before the delete: a deleted row is skipped.
      const existing = await client.query<{
        request_fingerprint: string;
        response_status: number;
        response_body: unknown;
      }>(
        `WITH forgotten AS (
           DELETE FROM ${SCHEMA}.idempotency_keys
            WHERE key = $1 AND $2::int IS NOT NULL AND created_at <= clock_timestamp() - make_interval(secs => $2::int)
           RETURNING key)
         SELECT request_fingerprint, response_status, response_body FROM ${SCHEMA}.idempotency_keys
          WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM forgotten)`,
        [args.key, args.retentionSeconds ?? null],
      );
      const done = existing.rows[0];
      if (done) {
        if (done.request_fingerprint !== args.fingerprint) return { kind: "mismatch" };
        return { kind: "replayed", response: { status: done.response_status, body: done.response_body } };
      }

      const input = await args.decide();
      const inserted = await client.query<ChargeDbRow>(
        `INSERT INTO ${SCHEMA}.charges
           (id, amount, currency, payment_method, status, failure_code, failure_message,
            idempotency_key, request_fingerprint, metadata, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, clock_timestamp())
         RETURNING ${CHARGE_COLUMNS}`,
        [
          newChargeId(),
          input.amount,
          input.currency,
          input.paymentMethod,
          input.status,
          input.failureCode,
          input.failureMessage,
          args.key,
          args.fingerprint,
          JSON.stringify(input.metadata),
        ],
      );
      const row = inserted.rows[0];
      if (!row) throw new Error("INSERT … RETURNING returned no row");
      const charge = toChargeRow(row);
      const response = args.render(charge);
      const literal = (v: string) => client.escapeLiteral(v);
      await commitWith(
        `INSERT INTO ${SCHEMA}.idempotency_keys (key, request_fingerprint, charge_id, response_status, response_body)
         VALUES (${literal(args.key)}, ${literal(args.fingerprint)}, ${literal(charge.id)}, ${Number(response.status)},
                 ${literal(JSON.stringify(response.body))}::json)`,
      );
      return { kind: "created", charge, response };
    });
  } catch (err) {
    // Backstop: the key table's primary key makes a second charge for one live key impossible
    // even if the advisory lock were bypassed; the loser is told to retry.
    if (isUniqueViolation(err)) return { kind: "in_flight" };
    throw err;
  }
}

export async function findCharge(pool: Pool, id: string): Promise<ChargeRow | null> {
  const result = await pool.query<ChargeDbRow>(
    `SELECT ${CHARGE_COLUMNS} FROM ${SCHEMA}.charges WHERE id = $1`,
    [id],
  );
  const row = result.rows[0];
  return row ? toChargeRow(row) : null;
}

export class UnknownCursorError extends Error {
  override name = "UnknownCursorError";
}

/** Keyset pagination ordered by (created_at, id). Throws UnknownCursorError for a bad `startingAfter`. */
export async function listCharges(
  pool: Pool,
  opts: {
    limit: number;
    startingAfter?: string;
    createdGte?: Date;
    idempotencyKey?: string;
    /** Charges whose metadata holds all of these pairs. */
    metadata?: Record<string, string>;
  },
): Promise<{ charges: ChargeRow[]; hasMore: boolean }> {
  if (opts.startingAfter !== undefined) {
    const cursor = await pool.query(`SELECT 1 FROM ${SCHEMA}.charges WHERE id = $1`, [opts.startingAfter]);
    if (cursor.rowCount === 0) throw new UnknownCursorError(`No such charge: ${opts.startingAfter}`);
  }
  const result = await pool.query<ChargeDbRow>(
    `SELECT ${CHARGE_COLUMNS} FROM ${SCHEMA}.charges
     WHERE ($1::timestamptz IS NULL OR created_at >= $1::timestamptz)
       AND ($2::text IS NULL OR idempotency_key = $2::text)
       AND ($3::text IS NULL OR (created_at, id) > (SELECT c.created_at, c.id FROM ${SCHEMA}.charges c WHERE c.id = $3::text))
       AND ($5::jsonb IS NULL OR metadata @> $5::jsonb)
     ORDER BY created_at, id
     LIMIT $4`,
    [
      opts.createdGte ?? null,
      opts.idempotencyKey ?? null,
      opts.startingAfter ?? null,
      opts.limit + 1,
      opts.metadata ? JSON.stringify(opts.metadata) : null,
    ],
  );
  const hasMore = result.rows.length > opts.limit;
  return { charges: result.rows.slice(0, opts.limit).map(toChargeRow), hasMore };
}

/**
 * Runs `work` holding the key's transaction-scoped advisory lock; `in_flight` when another
 * request holds it. `commitWith(sql)` sends work's last statement and COMMIT in one simple query
 * (its values written as escaped literals), saving a round trip.
 */
async function inTransaction(
  pool: Pool,
  lockId: string,
  work: (client: PoolClient, commitWith: (sql: string) => Promise<void>) => Promise<ChargeOnceResult>,
): Promise<ChargeOnceResult> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // READ COMMITTED explicitly: after taking the key lock, the next statement must see what the
    // previous holder committed. BEGIN and the lock travel in one simple query; the lock id is
    // a bigint we computed, so it is written as a number.
    if (!/^-?\d+$/.test(lockId)) throw new Error(`not a lock id: ${lockId}`);
    const results = (await client.query(
      `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_try_advisory_xact_lock(${lockId}::bigint) AS locked`,
    )) as unknown as { rows: { locked?: boolean }[] }[];
    const locked = results[1]?.rows[0]?.locked === true;
    let committed = false;
    const commitWith = async (sql: string) => {
      await client.query(`${sql}; COMMIT`);
      committed = true;
    };
    const result: ChargeOnceResult = locked ? await work(client, commitWith) : { kind: "in_flight" };
    if (!committed) await client.query("COMMIT");
    return result;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch (rollbackErr) {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}
