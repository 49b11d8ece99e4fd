-- Named operators with roles (issue 42, decision 0200): each signs in with their own email and
-- secret; an admin session belongs to one operator or, without one, to ADMIN_TOKEN (the first
-- owner's bootstrap). A removed operator keeps their row (the audit log names them) and their
-- sessions end in the same statement that removes them.
CREATE TABLE "operators" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by" TEXT NOT NULL,
    "removed_at" TIMESTAMPTZ(3),
    "removed_by" TEXT,

    CONSTRAINT "operators_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operators_role" CHECK ("role" IN ('owner', 'operator', 'viewer')),
    CONSTRAINT "operators_email_lower" CHECK ("email" = lower("email"))
);
CREATE UNIQUE INDEX "operators_email_key" ON "operators"("email");

ALTER TABLE "admin_sessions" ADD COLUMN "operator_id" UUID;
ALTER TABLE "admin_sessions" ADD CONSTRAINT "admin_sessions_operator_id_fkey"
    FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE INDEX "admin_sessions_operator_id_idx" ON "admin_sessions"("operator_id");

-- The console's lists (decision 0201): newest first with a keyset cursor on (created_at, id),
-- narrowed by the shopper without leaving an index. No index names a status or an amount: a
-- payment's, an order's and a refund's settlement change their status and must stay HOT updates
-- (decisions 0127, 0128); a status or amount search filters the newest-first index instead.
CREATE INDEX "payments_created_at_id_idx" ON "payments"("created_at" DESC, "id" DESC);
CREATE INDEX "payments_account_id_created_at_id_idx" ON "payments"("account_id", "created_at" DESC, "id" DESC);
CREATE INDEX "orders_created_at_id_idx" ON "orders"("created_at" DESC, "id" DESC);
CREATE INDEX "refunds_created_at_id_idx" ON "refunds"("created_at" DESC, "id" DESC);
CREATE INDEX "refunds_account_id_created_at_id_idx" ON "refunds"("account_id", "created_at" DESC, "id" DESC);
