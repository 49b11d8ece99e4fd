/**
 * The provider's refunds, in its own schema beside the charges (see store.ts for the charges).
 *
 * A refund is taken in one statement, the function `refund_once`: it takes the key's advisory lock
 * without waiting (a concurrent duplicate is "in flight"), forgets the key past retention, replays
 * a key seen before, and otherwise raises the charge's `amount_refunded` by the refund's amount in
 * an UPDATE whose condition is the refundable rest. That UPDATE locks the charge row, so refunds of
 * one charge serialise on it and each sees the sum its predecessors left; the column's CHECK
 * (`amount_refunded <= amount`) refuses an over-refund even if the condition were bypassed. The
 * refund row and the key row are inserted after it, so all three commit together or not at all.
 * A refusal (unknown charge, a declined charge, too large an amount) writes nothing: the key stays
 * unused, and since a charge's refundable rest only shrinks, a retry is refused again.
 */
import type { Pool } from "pg";
import { advisoryLockId, isUniqueViolation, type ListFilters, readPage, SCHEMA, timeOrderedId } from "./pg";

export interface RefundRow {
  id: string;
  charge: string;
  amount: number;
  currency: string;
  status: "succeeded";
  idempotencyKey: string;
  metadata: Record<string, string>;
  createdAt: Date;
}

export type RefundOnceResult =
  | { kind: "created"; refund: RefundRow }
  | { kind: "replayed"; refund: RefundRow }
  | { kind: "mismatch" }
  | { kind: "in_flight" }
  | { kind: "charge_missing" }
  | { kind: "charge_not_refundable"; chargeStatus: string }
  | { kind: "amount_too_large"; refundable: number };

export const REFUND_DDL = `
ALTER TABLE ${SCHEMA}.charges
  ADD COLUMN IF NOT EXISTS amount_refunded bigint NOT NULL DEFAULT 0
  CONSTRAINT charges_amount_refunded_check CHECK (amount_refunded >= 0 AND amount_refunded <= amount);

CREATE TABLE IF NOT EXISTS ${SCHEMA}.refunds (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^re_[0-9a-f]+$'),
  charge_id text COLLATE "C" NOT NULL REFERENCES ${SCHEMA}.charges (id),
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  status text NOT NULL CHECK (status = 'succeeded'),
  idempotency_key text NOT NULL,
  request_fingerprint text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS refunds_created_at_id_idx ON ${SCHEMA}.refunds (created_at, id);
CREATE INDEX IF NOT EXISTS refunds_charge_id_idx ON ${SCHEMA}.refunds (charge_id);
CREATE INDEX IF NOT EXISTS refunds_idempotency_key_idx ON ${SCHEMA}.refunds (idempotency_key);
CREATE INDEX IF NOT EXISTS refunds_metadata_idx ON ${SCHEMA}.refunds USING gin (metadata jsonb_path_ops);

-- Refund keys are their own namespace: a charge's key and a refund's never meet.
CREATE TABLE IF NOT EXISTS ${SCHEMA}.refund_idempotency_keys (
  key text PRIMARY KEY,
  request_fingerprint text NOT NULL,
  refund_id text COLLATE "C" NOT NULL UNIQUE REFERENCES ${SCHEMA}.refunds (id),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE OR REPLACE FUNCTION ${SCHEMA}.refund_once(
  p_lock bigint, p_key text, p_fingerprint text, p_retention int,
  p_id text, p_charge text, p_amount bigint, p_metadata jsonb)
RETURNS TABLE (outcome text, refund_id text, refundable bigint, charge_status text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_fingerprint text;
  v_refund text;
  v_currency text;
  v_status text;
  v_rest bigint;
BEGIN
  -- A volatile function's statements each take a new snapshot: the lookup after the lock sees
  -- what the lock's previous holder committed.
  IF NOT pg_try_advisory_xact_lock(p_lock) THEN
    RETURN QUERY SELECT 'in_flight', NULL::text, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  IF p_retention IS NOT NULL THEN
    DELETE FROM ${SCHEMA}.refund_idempotency_keys k
     WHERE k.key = p_key AND k.created_at <= clock_timestamp() - make_interval(secs => p_retention);
  END IF;
  SELECT k.request_fingerprint, k.refund_id INTO v_fingerprint, v_refund
    FROM ${SCHEMA}.refund_idempotency_keys k WHERE k.key = p_key;
  IF v_refund IS NOT NULL THEN
    RETURN QUERY SELECT CASE WHEN v_fingerprint = p_fingerprint THEN 'replayed' ELSE 'mismatch' END,
                        v_refund, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  UPDATE ${SCHEMA}.charges c SET amount_refunded = c.amount_refunded + p_amount
   WHERE c.id = p_charge AND c.status = 'succeeded' AND c.amount_refunded + p_amount <= c.amount
   RETURNING c.currency INTO v_currency;
  IF v_currency IS NULL THEN
    SELECT c.status, c.amount - c.amount_refunded INTO v_status, v_rest
      FROM ${SCHEMA}.charges c WHERE c.id = p_charge;
    RETURN QUERY SELECT CASE WHEN v_status IS NULL THEN 'charge_missing'
                             WHEN v_status <> 'succeeded' THEN 'charge_not_refundable'
                             ELSE 'amount_too_large' END,
                        NULL::text, v_rest, v_status;
    RETURN;
  END IF;
  INSERT INTO ${SCHEMA}.refunds (id, charge_id, amount, currency, status, idempotency_key, request_fingerprint, metadata)
  VALUES (p_id, p_charge, p_amount, v_currency, 'succeeded', p_key, p_fingerprint, p_metadata);
  INSERT INTO ${SCHEMA}.refund_idempotency_keys (key, request_fingerprint, refund_id)
  VALUES (p_key, p_fingerprint, p_id);
  RETURN QUERY SELECT 'created', p_id, NULL::bigint, NULL::text;
END
$fn$;
`;

/** `re_` and 24 hex digits, time-ordered. */
export function newRefundId(): string {
  return timeOrderedId("re");
}

const REFUND_COLUMNS = "id, charge_id, amount, currency, status, idempotency_key, metadata, created_at";

interface RefundDbRow {
  id: string;
  charge_id: string;
  amount: string;
  currency: string;
  status: "succeeded";
  idempotency_key: string;
  metadata: Record<string, string>;
  created_at: Date;
}

function toRefundRow(row: RefundDbRow): RefundRow {
  return {
    id: row.id,
    charge: row.charge_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    idempotencyKey: row.idempotency_key,
    metadata: row.metadata,
    createdAt: row.created_at,
  };
}

interface RefundOnceDbRow {
  outcome:
    | "in_flight"
    | "replayed"
    | "mismatch"
    | "charge_missing"
    | "charge_not_refundable"
    | "amount_too_large"
    | "created";
  refund_id: string | null;
  refundable: string | null;
  charge_status: string | null;
}

/**
 * Refunds part or all of a charge exactly once per idempotency key (see the file's comment).
 * A refund is immutable, so its answer, first or replayed, is rendered from its row.
 */
export async function createRefundOnce(
  pool: Pool,
  args: {
    key: string;
    fingerprint: string;
    charge: string;
    amount: number;
    metadata: Record<string, string>;
    /** Keys older than this are forgotten: the request runs as new. Default: kept forever. */
    retentionSeconds?: number;
  },
): Promise<RefundOnceResult> {
  let row: RefundOnceDbRow | undefined;
  try {
    const result = await pool.query<RefundOnceDbRow>(
      `SELECT * FROM ${SCHEMA}.refund_once($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        advisoryLockId(`${SCHEMA}/refund-idempotency/${args.key}`),
        args.key,
        args.fingerprint,
        args.retentionSeconds ?? null,
        newRefundId(),
        args.charge,
        args.amount,
        JSON.stringify(args.metadata),
      ],
    );
    row = result.rows[0];
  } catch (err) {
    // Backstop: the key's primary key refuses a second refund for one live key even if the
    // advisory lock were bypassed; the loser is told to retry.
    if (isUniqueViolation(err)) return { kind: "in_flight" };
    throw err;
  }
  if (!row) throw new Error("the refund statement returned no row");
  switch (row.outcome) {
    case "in_flight":
    case "mismatch":
    case "charge_missing":
      return { kind: row.outcome };
    case "charge_not_refundable":
      return { kind: row.outcome, chargeStatus: String(row.charge_status) };
    case "amount_too_large":
      return { kind: row.outcome, refundable: Number(row.refundable) };
    case "created":
    case "replayed": {
      const refund = await findRefund(pool, String(row.refund_id));
      if (!refund) throw new Error(`refund ${row.refund_id} vanished after its statement`);
      return { kind: row.outcome, refund };
    }
  }
}

export async function findRefund(pool: Pool, id: string): Promise<RefundRow | null> {
  const result = await pool.query<RefundDbRow>(
    `SELECT ${REFUND_COLUMNS} FROM ${SCHEMA}.refunds WHERE id = $1`,
    [id],
  );
  const row = result.rows[0];
  return row ? toRefundRow(row) : null;
}

/** Keyset pagination ordered by (created_at, id), as listCharges. Throws UnknownCursorError. */
export async function listRefunds(
  pool: Pool,
  opts: ListFilters & { charge?: string },
): Promise<{ refunds: RefundRow[]; hasMore: boolean }> {
  const page = await readPage<RefundDbRow>(pool, "refunds", REFUND_COLUMNS, opts);
  return { refunds: page.rows.map(toRefundRow), hasMore: page.hasMore };
}
