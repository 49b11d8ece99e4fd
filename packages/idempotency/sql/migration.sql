-- @idempotent-checkout/idempotency: the tables and the function the layer uses (PostgreSQL 13+).
-- Apply once, as a migration of your own. Add your owner table's foreign key yourself, e.g.:
--   ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_fkey"
--     FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE;

CREATE TABLE "idempotency_keys" (
    "id" BIGSERIAL NOT NULL,
    "account_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "procedure" TEXT NOT NULL,
    "fingerprint" CHAR(64) NOT NULL,
    "request_params" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'in_progress',
    "recovery_point" TEXT NOT NULL DEFAULT 'started',
    -- The recovery point its first phase reached with the claim itself; null: none ran with it.
    "claim_point" TEXT,
    "fence" INTEGER NOT NULL DEFAULT 1,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "locked_until" TIMESTAMPTZ(3),
    "lease_seconds" INTEGER NOT NULL,
    -- json, not jsonb: a replay keeps the stored key order byte for byte.
    "response_status" INTEGER,
    "response_body" JSON,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    -- The completer's own attempts (its backoff and "needs attention" count these alone), when it
    -- may try next, and why the last attempt stopped short.
    "completer_attempts" INTEGER NOT NULL DEFAULT 0,
    "next_recovery_at" TIMESTAMPTZ(3),
    "last_error" TEXT,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("id"),
    -- The state machine's invariants, kept by the database as well as the code.
    CONSTRAINT "idempotency_keys_state_check" CHECK ("state" IN ('in_progress', 'completed')),
    CONSTRAINT "idempotency_keys_key_check" CHECK (length("key") BETWEEN 1 AND 512),
    CONSTRAINT "idempotency_keys_completed_has_response" CHECK (
      "state" <> 'completed' OR ("response_status" IS NOT NULL AND "response_body" IS NOT NULL)),
    CONSTRAINT "idempotency_keys_lease_check" CHECK ("lease_seconds" > 0 AND "fence" > 0)
);

CREATE UNIQUE INDEX "idempotency_keys_account_id_key_key" ON "idempotency_keys"("account_id", "key");
-- Completed keys by expiry, for the sweep; unfinished ones it finds by the recovery index.
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at") WHERE "state" = 'completed';
-- The completer's search for unfinished keys of one procedure.
CREATE INDEX "idempotency_keys_recovery_idx" ON "idempotency_keys"("procedure", "next_recovery_at") WHERE "state" = 'in_progress';
-- Room on each page for the completion's new row version: on the row's own page PostgreSQL logs
-- only the bytes that changed, not the whole row again.
ALTER TABLE "idempotency_keys" SET (fillfactor = 70);

-- Each key's unusual events (takeovers, progress after the claim, releases, pauses, refusals,
-- fenced attempts, re-drives). Its ordinary life is read from the key row: see the view below.
CREATE TABLE "idempotency_key_events" (
    "id" BIGSERIAL NOT NULL,
    "key_id" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "fence" INTEGER NOT NULL,
    "detail" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_key_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "idempotency_key_events_key_id_idx" ON "idempotency_key_events"("key_id");
ALTER TABLE "idempotency_key_events" ADD CONSTRAINT "idempotency_key_events_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "idempotency_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A key's whole history, oldest first by (at, seq): claimed (created_at), the first phase that
-- committed with the claim (claim_point), the stored events, completed (completed_at).
CREATE VIEW "idempotency_key_history" AS
  SELECT k."id" AS "key_id", -1::bigint AS "id", 0::bigint AS "seq", 'claimed'::text AS "kind",
         1 AS "fence", NULL::text AS "detail", k."created_at" AS "at"
    FROM "idempotency_keys" k
  UNION ALL
  SELECT k."id", -2, 1, 'progressed', 1, k."claim_point", k."created_at"
    FROM "idempotency_keys" k WHERE k."claim_point" IS NOT NULL
  UNION ALL
  SELECT e."key_id", e."id", 2 + e."id", e."kind", e."fence", e."detail", e."at"
    FROM "idempotency_key_events" e
  UNION ALL
  SELECT k."id", -3, 9223372036854775807, 'completed', k."fence", k."response_status"::text,
         coalesce(k."completed_at", k."updated_at")
    FROM "idempotency_keys" k WHERE k."state" = 'completed';

-- Outcome counters per minute, summed across processes.
-- Outcomes per minute and per procedure (a key's `procedure`; "" for counts without one).
CREATE TABLE "idempotency_outcome_counts" (
    "bucket" TIMESTAMPTZ(0) NOT NULL,
    "procedure" TEXT NOT NULL DEFAULT '',
    "outcome" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "idempotency_outcome_counts_pkey" PRIMARY KEY ("bucket","procedure","outcome")
);

-- A statement built of several parts rolls itself back when a write it depends on matched nothing
-- (the key's fence, say): this raises inside the statement, so nothing of it commits. The code
-- travels as the error's CONSTRAINT and DETAIL under a SQLSTATE of its own (IC001), for
-- `isRequirementFailure` to read; the message is for people.
CREATE OR REPLACE FUNCTION statement_require(ok BOOLEAN, reason TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'statement requirement failed: %', reason
      USING ERRCODE = 'IC001', CONSTRAINT = reason, DETAIL = reason;
  END IF;
  RETURN true;
END $$;
