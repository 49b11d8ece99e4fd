/**
 * The simulator's tables in its own schema `payment_provider` (it never touches the app's).
 *
 * Each API object is kept as the JSON Stripe would answer (`object`), beside the columns its
 * lists, searches and checks need. A request's changes, its events and its idempotency key's
 * stored answer commit in one transaction (idempotency.ts), so a crash leaves all or nothing.
 */
import type { Pool } from "pg";
import { inTransaction, SCHEMA } from "./pg";

/** Arbitrary constants: the (int4, int4) advisory-lock key guarding schema creation. */
const SCHEMA_LOCK = [0x70_61_79_70, 1] as const;

/** Where the tables of the simulator's first wire format (`/v1/charges`) are moved, kept, not dropped. */
export const LEGACY_SCHEMA = "payment_provider_v1";

const MOVE_LEGACY = `
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
              WHERE table_schema = '${SCHEMA}' AND table_name = 'charges' AND column_name = 'request_fingerprint') THEN
    CREATE SCHEMA IF NOT EXISTS ${LEGACY_SCHEMA};
    ALTER TABLE IF EXISTS ${SCHEMA}.refund_idempotency_keys SET SCHEMA ${LEGACY_SCHEMA};
    ALTER TABLE IF EXISTS ${SCHEMA}.refunds SET SCHEMA ${LEGACY_SCHEMA};
    ALTER TABLE IF EXISTS ${SCHEMA}.idempotency_keys SET SCHEMA ${LEGACY_SCHEMA};
    ALTER TABLE IF EXISTS ${SCHEMA}.charges SET SCHEMA ${LEGACY_SCHEMA};
    DROP FUNCTION IF EXISTS ${SCHEMA}.charge_once;
    DROP FUNCTION IF EXISTS ${SCHEMA}.refund_once;
  END IF;
END $$;
`;

const DDL = `
CREATE SCHEMA IF NOT EXISTS ${SCHEMA};

CREATE TABLE IF NOT EXISTS ${SCHEMA}.payment_intents (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^pi_[0-9a-f]+$'),
  created timestamptz(3) NOT NULL,
  status text NOT NULL CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'requires_action',
                                         'processing', 'requires_capture', 'succeeded', 'canceled')),
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  object jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS payment_intents_created_id_idx ON ${SCHEMA}.payment_intents (created, id);
-- Authorizations awaiting capture, for their expiry (authorization-expiry.ts).
CREATE INDEX IF NOT EXISTS payment_intents_requires_capture_idx ON ${SCHEMA}.payment_intents (created)
  WHERE status = 'requires_capture';
CREATE INDEX IF NOT EXISTS payment_intents_metadata_idx ON ${SCHEMA}.payment_intents USING gin (metadata jsonb_path_ops);

CREATE TABLE IF NOT EXISTS ${SCHEMA}.charges (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^ch_[0-9a-f]+$'),
  payment_intent text COLLATE "C" NOT NULL REFERENCES ${SCHEMA}.payment_intents (id),
  created timestamptz(3) NOT NULL,
  amount_captured bigint NOT NULL DEFAULT 0,
  -- The backstop of refund.ts's row lock: refunds never exceed what was captured.
  amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount_captured),
  object jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS charges_payment_intent_idx ON ${SCHEMA}.charges (payment_intent);

CREATE TABLE IF NOT EXISTS ${SCHEMA}.refunds (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^re_[0-9a-f]+$'),
  payment_intent text COLLATE "C" NOT NULL REFERENCES ${SCHEMA}.payment_intents (id),
  charge text COLLATE "C" NOT NULL REFERENCES ${SCHEMA}.charges (id),
  created timestamptz(3) NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  object jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS refunds_created_id_idx ON ${SCHEMA}.refunds (created, id);
CREATE INDEX IF NOT EXISTS refunds_payment_intent_idx ON ${SCHEMA}.refunds (payment_intent);
CREATE INDEX IF NOT EXISTS refunds_charge_idx ON ${SCHEMA}.refunds (charge);

CREATE TABLE IF NOT EXISTS ${SCHEMA}.events (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^evt_[0-9a-f]+$'),
  created timestamptz(3) NOT NULL,
  type text NOT NULL,
  object_id text NOT NULL,
  -- Endpoints still to acknowledge it: 0 once delivered (or when no endpoint is configured).
  pending_webhooks int NOT NULL DEFAULT 0,
  object jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS events_created_id_idx ON ${SCHEMA}.events (created, id);
CREATE INDEX IF NOT EXISTS events_pending_idx ON ${SCHEMA}.events (created, id) WHERE pending_webhooks > 0;
-- Webhook delivery (webhooks.ts): when the next attempt is due (NULL: delivered, or given up),
-- attempts so far, the last failure, and the faults the causing request asked for.
ALTER TABLE ${SCHEMA}.events
  ADD COLUMN IF NOT EXISTS webhook_next_at timestamptz,
  ADD COLUMN IF NOT EXISTS webhook_attempts int NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS webhook_last_error text,
  ADD COLUMN IF NOT EXISTS webhook_fault text;
CREATE INDEX IF NOT EXISTS events_webhook_due_idx ON ${SCHEMA}.events (webhook_next_at) WHERE pending_webhooks > 0;

-- 3-D Secure challenges (three-d-secure.ts): the token of the page's address, and the outcome
-- once answered; the intent's own row says whether it still waits for this one.
CREATE TABLE IF NOT EXISTS ${SCHEMA}.three_d_secure_challenges (
  token text COLLATE "C" PRIMARY KEY,
  payment_intent text COLLATE "C" NOT NULL REFERENCES ${SCHEMA}.payment_intents (id),
  return_url text NOT NULL,
  created timestamptz(3) NOT NULL,
  outcome text CHECK (outcome IN ('succeeded', 'failed')),
  resolved_at timestamptz(3),
  CHECK ((outcome IS NULL) = (resolved_at IS NULL))
);
CREATE INDEX IF NOT EXISTS three_d_secure_challenges_payment_intent_idx
  ON ${SCHEMA}.three_d_secure_challenges (payment_intent);

-- One row per Idempotency-Key that began executing, with the exact answer: kept for the retention
-- period (24 h, as Stripe), then forgotten, and the same key runs as new.
CREATE TABLE IF NOT EXISTS ${SCHEMA}.idempotent_requests (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  response_status int NOT NULL,
  response_body json NOT NULL, -- json, not jsonb: replayed byte for byte
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`;

/** Creates the schema and tables if missing. Safe to run from several processes at once. */
export async function ensureSchema(pool: Pool): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [...SCHEMA_LOCK]);
    await client.query(MOVE_LEGACY);
    await client.query(DDL);
  });
}
