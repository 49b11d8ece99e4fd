-- API keys gain a scope, an optional expiry and the time they were last used (decision 0062).
ALTER TABLE "api_tokens" ADD COLUMN "scope" TEXT NOT NULL DEFAULT 'payments',
ADD COLUMN "expires_at" TIMESTAMPTZ(3),
ADD COLUMN "last_used_at" TIMESTAMPTZ(3);
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_scope_check" CHECK ("scope" IN ('payments', 'read_only'));

-- Admin sign-ins as rows that can be ended, and the audit trail of admin actions (decision 0063).
CREATE TABLE "admin_sessions" (
    "id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "token_fingerprint" TEXT NOT NULL,
    "ip_address" TEXT,
    "user_agent" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    "ended_by" TEXT,

    CONSTRAINT "admin_sessions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "admin_sessions_token_hash_key" ON "admin_sessions"("token_hash");
CREATE INDEX "admin_sessions_created_at_idx" ON "admin_sessions"("created_at" DESC);

CREATE TABLE "admin_audit_events" (
    "id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "address" TEXT,
    "action" TEXT NOT NULL,
    "subject" TEXT,
    "outcome" TEXT NOT NULL,
    "detail" JSONB,

    CONSTRAINT "admin_audit_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "admin_audit_events_at_idx" ON "admin_audit_events"("at" DESC);
