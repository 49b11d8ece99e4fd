-- Mismatches between the provider and our books live here until evidence (a later run that
-- re-examined the item and found it fine) or an operator resolves them: a run that cannot reach
-- the provider, or another instance's run, never erases one (issue 25, decision 0051).
CREATE TABLE "reconciliation_mismatches" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "payment_id" TEXT,
    "charge_id" TEXT,
    "booked_charge_id" TEXT,
    "detail" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "last_run_id" UUID,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by" TEXT,
    "resolution" TEXT,

    CONSTRAINT "reconciliation_mismatches_pkey" PRIMARY KEY ("id")
);

-- One open row per item: concurrent runs on several instances meet here.
CREATE UNIQUE INDEX "reconciliation_mismatches_open_key" ON "reconciliation_mismatches"
    ("kind", coalesce("payment_id", ''), coalesce("charge_id", '')) WHERE "resolved_at" IS NULL;
