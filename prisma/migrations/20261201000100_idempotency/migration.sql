-- CreateTable
CREATE TABLE "idempotency_keys" (
    "id" BIGSERIAL NOT NULL,
    "account_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "procedure" TEXT NOT NULL,
    "fingerprint" CHAR(64) NOT NULL,
    "request_params" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'in_progress',
    "recovery_point" TEXT NOT NULL DEFAULT 'started',
    "fence" INTEGER NOT NULL DEFAULT 1,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "locked_until" TIMESTAMPTZ(3),
    "lease_seconds" INTEGER NOT NULL,
    "response_status" INTEGER,
    "response_body" JSON,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_key_events" (
    "id" BIGSERIAL NOT NULL,
    "key_id" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "fence" INTEGER NOT NULL,
    "detail" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_key_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_outcome_counts" (
    "bucket" TIMESTAMPTZ(0) NOT NULL,
    "outcome" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "idempotency_outcome_counts_pkey" PRIMARY KEY ("bucket","outcome")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- CreateIndex
CREATE INDEX "idempotency_keys_state_locked_until_idx" ON "idempotency_keys"("state", "locked_until");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_keys_account_id_key_key" ON "idempotency_keys"("account_id", "key");

-- CreateIndex
CREATE INDEX "idempotency_key_events_key_id_idx" ON "idempotency_key_events"("key_id");

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_key_events" ADD CONSTRAINT "idempotency_key_events_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "idempotency_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The state machine's invariants, kept by the database as well as the code.
ALTER TABLE "idempotency_keys"
  ADD CONSTRAINT "idempotency_keys_state_check" CHECK ("state" IN ('in_progress', 'completed')),
  ADD CONSTRAINT "idempotency_keys_key_check" CHECK (length("key") BETWEEN 1 AND 255),
  ADD CONSTRAINT "idempotency_keys_completed_has_response" CHECK (
    "state" <> 'completed' OR ("response_status" IS NOT NULL AND "response_body" IS NOT NULL)),
  ADD CONSTRAINT "idempotency_keys_lease_check" CHECK ("lease_seconds" > 0 AND "fence" > 0);
