/**
 * Durable storage of the fake payment provider, in its own Postgres schema
 * `payment_provider` (it never reads or writes the app's tables).
 *
 * Idempotency model: a request holds a transaction-scoped advisory lock on its
 * idempotency key while it runs. The charge row and the key row (with the
 * stored response) are inserted in one statement, so they commit together or
 * not at all; a crash mid-request leaves no half-finished key behind, and a
 * concurrent duplicate that cannot take the lock is "in flight".
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Pool } from "pg";
import {
  advisoryLockId,
  inTransaction,
  isUniqueViolation,
  type ListFilters,
  readPage,
  SCHEMA,
  timeOrderedId,
  UnknownCursorError,
} from "./pg";
import { REFUND_DDL } from "./refund-store";

export { SCHEMA, UnknownCursorError };

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
  await inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [...SCHEMA_LOCK]);
    await client.query(DDL);
    await client.query(CHARGE_ONCE_FUNCTION);
    await client.query(REFUND_DDL);
  });
}

/** `ch_` and 24 hex digits, time-ordered (see timeOrderedId). */
export function newChargeId(): string {
  return timeOrderedId("ch");
}

/** A bigint advisory-lock key derived from the idempotency key (64 bits of sha256). */
function keyLockId(key: string): string {
  return advisoryLockId(`${SCHEMA}/idempotency/${key}`);
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
 * One statement does a charge's whole idempotent step: take the key's advisory lock (without
 * waiting), forget the key if it is past retention, look it up, and, when it is new, insert the
 * charge and the key row with its stored response. In autocommit it is its own transaction.
 *
 * Its snapshot is taken before the lock: if the lock's previous holder commits in between, the
 * lookup misses its key and the key's primary key rejects the whole statement (23505), which is
 * answered as in flight; the retry replays. `p_insert` false runs the lookup alone.
 *
 * A PL/pgSQL function, so each connection parses the statement once (sent as SQL, parsing and
 * planning it cost as much as running it), with or without a pooler in between.
 */
const CHARGE_ONCE_FUNCTION = `
CREATE OR REPLACE FUNCTION ${SCHEMA}.charge_once(
  p_lock bigint, p_key text, p_fingerprint text, p_retention int, p_insert boolean,
  p_id text, p_amount bigint, p_currency text, p_method text, p_status text,
  p_failure_code text, p_failure_message text, p_metadata jsonb, p_created_at timestamptz,
  p_response_status int, p_response_body json)
RETURNS TABLE (held boolean, stored int, request_fingerprint text, response_status int, response_body json)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH lock AS (SELECT pg_try_advisory_xact_lock(p_lock) AS held),
  forgotten AS (
    DELETE FROM ${SCHEMA}.idempotency_keys k
     WHERE k.key = p_key AND (SELECT l.held FROM lock l) AND p_retention IS NOT NULL
       AND k.created_at <= clock_timestamp() - make_interval(secs => p_retention)
    RETURNING k.key),
  existing AS (
    SELECT k.request_fingerprint, k.response_status, k.response_body FROM ${SCHEMA}.idempotency_keys k
     WHERE k.key = p_key AND (SELECT l.held FROM lock l) AND NOT EXISTS (SELECT 1 FROM forgotten)),
  charge AS (
    INSERT INTO ${SCHEMA}.charges
      (id, amount, currency, payment_method, status, failure_code, failure_message,
       idempotency_key, request_fingerprint, metadata, created_at)
    SELECT p_id, p_amount, p_currency, p_method, p_status, p_failure_code, p_failure_message,
           p_key, p_fingerprint, p_metadata, p_created_at
     WHERE p_insert AND (SELECT l.held FROM lock l) AND NOT EXISTS (SELECT 1 FROM existing)
    RETURNING id),
  stored AS (
    INSERT INTO ${SCHEMA}.idempotency_keys (key, request_fingerprint, charge_id, response_status, response_body)
    SELECT p_key, p_fingerprint, c.id, p_response_status, p_response_body FROM charge c
    RETURNING 1)
  SELECT (SELECT l.held FROM lock l), (SELECT count(*) FROM stored)::int,
         e.request_fingerprint, e.response_status, e.response_body
    FROM (SELECT 1) AS one LEFT JOIN existing AS e ON true;
END
$fn$;
`;

const CHARGE_ONCE = `SELECT * FROM ${SCHEMA}.charge_once($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;

interface ChargeOnceRow {
  held: boolean;
  stored: number;
  request_fingerprint: string | null;
  response_status: number | null;
  response_body: unknown;
}

/**
 * Runs one charge creation exactly once per idempotency key.
 *
 * - another request holds the key right now → `in_flight` (nothing done);
 * - the key completed before → `replayed` with the stored response, or
 *   `mismatch` when the fingerprint of the parameters differs;
 * - otherwise the charge and the key row with `render(charge)` commit together: in one round
 *   trip, or, when `holdMs` is set (a slow card), in a transaction that keeps the key locked
 *   while it waits.
 */
export async function createChargeOnce(
  pool: Pool,
  args: {
    key: string;
    fingerprint: string;
    charge: NewCharge;
    /** How long the provider "thinks" before answering, the key held in flight meanwhile. */
    holdMs?: number;
    render: (charge: ChargeRow) => StoredResponse;
    /** Keys older than this are forgotten: the request runs as new. Default: kept forever. */
    retentionSeconds?: number;
  },
): Promise<ChargeOnceResult> {
  const charge: ChargeRow = {
    ...args.charge,
    id: newChargeId(),
    idempotencyKey: args.key,
    // The provider's clock, so the response can be rendered before the one statement runs.
    createdAt: new Date(),
  };
  const response = args.render(charge);
  const params = (insert: boolean) => [
    keyLockId(args.key),
    args.key,
    args.fingerprint,
    args.retentionSeconds ?? null,
    insert,
    charge.id,
    charge.amount,
    charge.currency,
    charge.paymentMethod,
    charge.status,
    charge.failureCode,
    charge.failureMessage,
    JSON.stringify(charge.metadata),
    charge.createdAt,
    response.status,
    JSON.stringify(response.body),
  ];
  const outcome = (row: ChargeOnceRow | undefined): ChargeOnceResult | null => {
    if (!row) throw new Error("the charge statement returned no row");
    if (!row.held) return { kind: "in_flight" };
    if (row.stored === 1) return { kind: "created", charge, response };
    if (row.request_fingerprint === null) return null;
    if (row.request_fingerprint !== args.fingerprint) return { kind: "mismatch" };
    return { kind: "replayed", response: { status: Number(row.response_status), body: row.response_body } };
  };
  // With the insert on, the statement either finds the key or stores it.
  const settled = (row: ChargeOnceRow | undefined): ChargeOnceResult => {
    const done = outcome(row);
    if (!done) throw new Error("the charge statement neither found nor stored the key");
    return done;
  };
  try {
    if (!args.holdMs) return settled((await pool.query<ChargeOnceRow>(CHARGE_ONCE, params(true))).rows[0]);
    const holdMs = args.holdMs;
    return await inTransaction(pool, async (client) => {
      const found = outcome((await client.query<ChargeOnceRow>(CHARGE_ONCE, params(false))).rows[0]);
      if (found) return found;
      await sleep(holdMs);
      return settled((await client.query<ChargeOnceRow>(CHARGE_ONCE, params(true))).rows[0]);
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

/** Keyset pagination ordered by (created_at, id). Throws UnknownCursorError for a bad `startingAfter`. */
export async function listCharges(
  pool: Pool,
  opts: ListFilters,
): Promise<{ charges: ChargeRow[]; hasMore: boolean }> {
  const page = await readPage<ChargeDbRow>(pool, "charges", CHARGE_COLUMNS, opts);
  return { charges: page.rows.map(toChargeRow), hasMore: page.hasMore };
}
