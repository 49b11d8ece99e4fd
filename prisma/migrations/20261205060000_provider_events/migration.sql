-- The provider's events as they were applied: one row per event id, written in the transaction
-- that applied the event (decision 0171), so a duplicate delivery changes nothing.
CREATE TABLE "provider_events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "object_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "via" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "detail" TEXT,

    CONSTRAINT "provider_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "provider_events_via" CHECK ("via" IN ('webhook', 'catch_up')),
    CONSTRAINT "provider_events_outcome" CHECK ("outcome" IN ('applied', 'already_settled', 'in_flight', 'mismatch', 'unknown_object', 'ignored'))
);

CREATE INDEX "provider_events_created_at_idx" ON "provider_events"("created_at");
CREATE INDEX "provider_events_outcome_received_at_idx" ON "provider_events"("outcome", "received_at");
