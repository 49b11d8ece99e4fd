-- Outcome counts per procedure, so that the admin chart shows refunds apart from payments
-- (decision 0120). As @idempotent-checkout/idempotency's migration.sql has the table (checked by
-- server/keys/schema.test.ts). Counts written before this migration keep procedure ''.
ALTER TABLE "idempotency_outcome_counts" ADD COLUMN "procedure" TEXT NOT NULL DEFAULT '';
ALTER TABLE "idempotency_outcome_counts" DROP CONSTRAINT "idempotency_outcome_counts_pkey";
ALTER TABLE "idempotency_outcome_counts"
  ADD CONSTRAINT "idempotency_outcome_counts_pkey" PRIMARY KEY ("bucket", "procedure", "outcome");
