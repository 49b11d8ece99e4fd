-- The completer's own attempts, counted apart from client takeovers, and its backoff schedule.
ALTER TABLE "idempotency_keys" ADD COLUMN "completer_attempts" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "idempotency_keys" ADD COLUMN "next_recovery_at" TIMESTAMPTZ(3);
ALTER TABLE "idempotency_keys" ADD COLUMN "last_error" TEXT;

-- The completer's scan: unfinished keys only, in the order it takes them.
CREATE INDEX "idempotency_keys_recovery_idx" ON "idempotency_keys"("procedure", "next_recovery_at") WHERE "state" = 'in_progress';

-- A reconciliation that could not reach the provider says so instead of failing.
ALTER TABLE "reconciliation_runs" ADD COLUMN "provider_error" TEXT;
