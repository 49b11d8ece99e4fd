-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending_payment',
    "total_minor" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_items" (
    "id" BIGSERIAL NOT NULL,
    "order_id" UUID NOT NULL,
    "sku" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "unit_price_minor" INTEGER NOT NULL,
    "quantity" INTEGER NOT NULL,
    "line_total_minor" INTEGER NOT NULL,

    CONSTRAINT "order_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "idempotency_key_id" BIGINT,
    "amount_minor" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "payment_method" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "provider_key" TEXT NOT NULL,
    "provider_charge_id" TEXT,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_accounts" (
    "id" SERIAL NOT NULL,
    "code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "normal_side" TEXT NOT NULL,
    "may_go_negative" BOOLEAN NOT NULL DEFAULT false,
    "balance_minor" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "ledger_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_transactions" (
    "id" UUID NOT NULL,
    "payment_id" UUID,
    "kind" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" BIGSERIAL NOT NULL,
    "transaction_id" UUID NOT NULL,
    "ledger_account_id" INTEGER NOT NULL,
    "payment_id" UUID,
    "entry_type" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reconciliation_runs" (
    "id" UUID NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "charges_checked" INTEGER NOT NULL DEFAULT 0,
    "payments_checked" INTEGER NOT NULL DEFAULT 0,
    "mismatches" JSONB NOT NULL DEFAULT '[]',

    CONSTRAINT "reconciliation_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "reconciliation_runs_started_at_idx" ON "reconciliation_runs"("started_at");

-- CreateIndex
CREATE INDEX "orders_account_id_created_at_idx" ON "orders"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "order_items_order_id_idx" ON "order_items"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "payments_idempotency_key_id_key" ON "payments"("idempotency_key_id");

-- CreateIndex
CREATE UNIQUE INDEX "payments_provider_key_key" ON "payments"("provider_key");

-- CreateIndex
CREATE UNIQUE INDEX "payments_provider_charge_id_key" ON "payments"("provider_charge_id");

-- CreateIndex
CREATE INDEX "payments_order_id_idx" ON "payments"("order_id");

-- CreateIndex
CREATE INDEX "payments_account_id_created_at_idx" ON "payments"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_accounts_code_currency_key" ON "ledger_accounts"("code", "currency");

-- CreateIndex
CREATE INDEX "ledger_transactions_created_at_idx" ON "ledger_transactions"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_transactions_payment_id_kind_key" ON "ledger_transactions"("payment_id", "kind");

-- CreateIndex
CREATE INDEX "ledger_entries_transaction_id_idx" ON "ledger_entries"("transaction_id");

-- CreateIndex
CREATE INDEX "ledger_entries_ledger_account_id_idx" ON "ledger_entries"("ledger_account_id");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_payment_id_entry_type_key" ON "ledger_entries"("payment_id", "entry_type");

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_idempotency_key_id_fkey" FOREIGN KEY ("idempotency_key_id") REFERENCES "idempotency_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_transactions" ADD CONSTRAINT "ledger_transactions_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "ledger_transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_ledger_account_id_fkey" FOREIGN KEY ("ledger_account_id") REFERENCES "ledger_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Business rules and money invariants, enforced by the database itself.
ALTER TABLE "orders"
  ADD CONSTRAINT "orders_status_check" CHECK ("status" IN ('pending_payment', 'paid')),
  ADD CONSTRAINT "orders_total_check" CHECK ("total_minor" > 0),
  ADD CONSTRAINT "orders_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$');
ALTER TABLE "order_items"
  ADD CONSTRAINT "order_items_quantity_check" CHECK ("quantity" > 0),
  ADD CONSTRAINT "order_items_line_total_check" CHECK ("line_total_minor" = "unit_price_minor" * "quantity");
ALTER TABLE "products" ADD CONSTRAINT "products_price_check" CHECK ("price_minor" > 0);
ALTER TABLE "payments"
  ADD CONSTRAINT "payments_status_check" CHECK ("status" IN ('pending', 'succeeded', 'declined', 'failed')),
  ADD CONSTRAINT "payments_amount_check" CHECK ("amount_minor" > 0),
  ADD CONSTRAINT "payments_succeeded_has_charge" CHECK ("status" <> 'succeeded' OR "provider_charge_id" IS NOT NULL);

-- At most one pending or succeeded payment per order: a second tab's Pay cannot charge twice.
CREATE UNIQUE INDEX "payments_one_open_per_order" ON "payments"("order_id") WHERE "status" IN ('pending', 'succeeded');

ALTER TABLE "ledger_accounts"
  ADD CONSTRAINT "ledger_accounts_normal_side_check" CHECK ("normal_side" IN ('debit', 'credit')),
  ADD CONSTRAINT "ledger_accounts_no_forbidden_negative" CHECK ("may_go_negative" OR "balance_minor" >= 0);
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_check" CHECK ("amount_minor" <> 0);

-- Each entry moves its account's balance, in the account's normal direction, in the same
-- transaction; the CHECK above then refuses a forbidden negative balance.
CREATE FUNCTION ledger_apply_entry() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  account ledger_accounts%ROWTYPE;
BEGIN
  SELECT * INTO account FROM ledger_accounts WHERE id = NEW.ledger_account_id FOR UPDATE;
  IF account.currency <> NEW.currency THEN
    RAISE EXCEPTION 'ledger entry in % posted to account % in %', NEW.currency, account.code, account.currency
      USING ERRCODE = 'check_violation';
  END IF;
  UPDATE ledger_accounts
     SET balance_minor = balance_minor + CASE WHEN account.normal_side = 'debit' THEN NEW.amount_minor ELSE -NEW.amount_minor END
   WHERE id = NEW.ledger_account_id;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_entries_apply AFTER INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_apply_entry();

-- The ledger is append-only: corrections are new transactions, never edits.
CREATE FUNCTION ledger_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_forbid_change();

-- Checked at commit, once all of a transaction's entries are in: they sum to zero, in one
-- currency, with at least two legs.
CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total NUMERIC;
  legs INTEGER;
  currencies INTEGER;
BEGIN
  SELECT coalesce(sum(amount_minor), 0), count(*), count(DISTINCT currency)
    INTO total, legs, currencies
    FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
  IF total <> 0 OR legs < 2 OR currencies <> 1 THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced: % entries summing to % in % currencies',
      NEW.transaction_id, legs, total, currencies USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

-- The house accounts for the catalogue's currency; others are created on first use.
INSERT INTO "ledger_accounts" ("code", "name", "currency", "normal_side", "may_go_negative") VALUES
  ('provider_clearing', 'Provider clearing (owed to us by the provider)', 'EUR', 'debit', false),
  ('merchant_revenue', 'Merchant revenue', 'EUR', 'credit', false);
