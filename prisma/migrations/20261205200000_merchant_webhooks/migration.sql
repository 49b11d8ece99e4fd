-- Merchant webhooks (issue 41, decision 0185): endpoints and their secrets, one message per
-- event and endpoint (made once from the outbox, unique on both), and every delivery attempt.
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "event_types" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,
    "failing_since" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_endpoints_disabled_reason" CHECK ("disabled_reason" IN ('gone', 'failing', 'merchant'))
);

CREATE TABLE "webhook_secrets" (
    "id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_secrets_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_secrets_format" CHECK ("secret" LIKE 'whsec\_%')
);

CREATE TABLE "webhook_messages" (
    "id" TEXT NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_messages_status" CHECK ("status" IN ('pending', 'succeeded', 'failed'))
);

CREATE TABLE "webhook_attempts" (
    "id" UUID NOT NULL,
    "message_id" TEXT NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "http_status" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "response_excerpt" TEXT,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_attempts_outcome" CHECK ("outcome" IN ('succeeded', 'failed'))
);

CREATE INDEX "webhook_endpoints_account_id_idx" ON "webhook_endpoints"("account_id");
CREATE INDEX "webhook_secrets_endpoint_id_idx" ON "webhook_secrets"("endpoint_id");
CREATE UNIQUE INDEX "webhook_messages_event_id_endpoint_id_key" ON "webhook_messages"("event_id", "endpoint_id");
CREATE INDEX "webhook_messages_endpoint_id_created_at_idx" ON "webhook_messages"("endpoint_id", "created_at");
CREATE INDEX "webhook_messages_status_next_attempt_at_idx" ON "webhook_messages"("status", "next_attempt_at");
CREATE INDEX "webhook_attempts_message_id_idx" ON "webhook_attempts"("message_id");
CREATE INDEX "webhook_attempts_endpoint_id_started_at_idx" ON "webhook_attempts"("endpoint_id", "started_at");
