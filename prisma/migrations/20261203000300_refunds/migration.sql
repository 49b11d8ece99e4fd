-- Refunds (issue 28): a second money movement on the idempotency core. The database refuses,
-- whatever the application does: refunds of one payment summing to more than it captured, a
-- refund of a payment that did not succeed, a reversal that does not match its refund (decision 0111).
CREATE TABLE "refunds" (
    "id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "idempotency_key_id" BIGINT,
    "amount_minor" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "reason" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "provider_refund_id" TEXT,
    "provider_key" TEXT NOT NULL,
    "refund_requested_at" TIMESTAMPTZ(3),
    "created_by" TEXT NOT NULL,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "refunds_status_check" CHECK ("status" IN ('pending', 'succeeded', 'failed')),
    CONSTRAINT "refunds_amount_check" CHECK ("amount_minor" > 0),
    CONSTRAINT "refunds_reason_check" CHECK (length("reason") BETWEEN 1 AND 200),
    CONSTRAINT "refunds_succeeded_has_provider_refund" CHECK ("status" <> 'succeeded' OR "provider_refund_id" IS NOT NULL)
);
CREATE UNIQUE INDEX "refunds_idempotency_key_id_key" ON "refunds"("idempotency_key_id");
CREATE UNIQUE INDEX "refunds_provider_key_key" ON "refunds"("provider_key");
CREATE UNIQUE INDEX "refunds_provider_refund_id_key" ON "refunds"("provider_refund_id");
CREATE INDEX "refunds_payment_id_idx" ON "refunds"("payment_id");
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_idempotency_key_id_fkey" FOREIGN KEY ("idempotency_key_id") REFERENCES "idempotency_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- A new refund locks its payment's row (FOR UPDATE), so the refunds of one payment are decided one
-- after the other, and never wait on a shared row (an account): two payments' refunds never meet.
-- After the lock, READ COMMITTED's next statement sees every refund committed before it: pending
-- and succeeded ones count, so a refund whose request is out holds its share until it ends.
-- Under REPEATABLE READ the snapshot would predate the lock: refused rather than trusted.
CREATE FUNCTION refunds_check_within_captured() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payment payments%ROWTYPE;
  taken BIGINT;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.payment_id <> OLD.payment_id OR NEW.account_id <> OLD.account_id
       OR NEW.amount_minor <> OLD.amount_minor OR NEW.currency <> OLD.currency THEN
      RAISE EXCEPTION 'a refund''s payment, account, amount and currency never change'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_immutable';
    END IF;
    IF OLD.status <> 'pending' AND NEW.status <> OLD.status THEN
      RAISE EXCEPTION 'refund % is % already: a settled refund is final', OLD.id, OLD.status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_settled_final';
    END IF;
    RETURN NEW;
  END IF;
  IF current_setting('transaction_isolation') = 'repeatable read' THEN
    RAISE EXCEPTION 'refunds are inserted under READ COMMITTED or SERIALIZABLE only'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_within_captured';
  END IF;
  SELECT * INTO payment FROM payments WHERE id = NEW.payment_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NEW; -- the foreign key refuses it
  END IF;
  IF payment.status <> 'succeeded' THEN
    RAISE EXCEPTION 'payment % is %: only a succeeded payment is refunded', payment.id, payment.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_payment_succeeded';
  END IF;
  IF NEW.account_id <> payment.account_id OR NEW.currency <> payment.currency THEN
    RAISE EXCEPTION 'refund % is not in its payment''s account and currency', NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_payment_matches';
  END IF;
  IF NEW.status = 'failed' THEN
    RETURN NEW;
  END IF;
  SELECT coalesce(sum(amount_minor), 0) INTO taken FROM refunds
   WHERE payment_id = NEW.payment_id AND status IN ('pending', 'succeeded');
  IF taken + NEW.amount_minor > payment.amount_minor THEN
    RAISE EXCEPTION 'refunds of payment % would total % of % captured', payment.id, taken + NEW.amount_minor, payment.amount_minor
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_within_captured';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "refunds_within_captured" BEFORE INSERT OR UPDATE ON "refunds"
  FOR EACH ROW EXECUTE FUNCTION refunds_check_within_captured();

-- One ledger transaction and one entry per money movement and kind: a payment's capture (no
-- refund), each refund's reversal. Replaces the uniqueness per payment and kind.
ALTER TABLE "ledger_transactions" ADD COLUMN "refund_id" UUID;
ALTER TABLE "ledger_entries" ADD COLUMN "refund_id" UUID;
ALTER TABLE "ledger_transactions" ADD CONSTRAINT "ledger_transactions_refund_id_fkey" FOREIGN KEY ("refund_id") REFERENCES "refunds"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_refund_id_fkey" FOREIGN KEY ("refund_id") REFERENCES "refunds"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
DROP INDEX "ledger_transactions_payment_id_kind_key";
DROP INDEX "ledger_entries_payment_id_entry_type_key";
CREATE UNIQUE INDEX "ledger_transactions_capture_kind_key" ON "ledger_transactions"("payment_id", "kind") WHERE "refund_id" IS NULL;
CREATE UNIQUE INDEX "ledger_transactions_refund_kind_key" ON "ledger_transactions"("refund_id", "kind") WHERE "refund_id" IS NOT NULL;
CREATE UNIQUE INDEX "ledger_entries_capture_entry_type_key" ON "ledger_entries"("payment_id", "entry_type") WHERE "refund_id" IS NULL;
CREATE UNIQUE INDEX "ledger_entries_refund_entry_type_key" ON "ledger_entries"("refund_id", "entry_type") WHERE "refund_id" IS NOT NULL;
CREATE INDEX "ledger_entries_refund_id_idx" ON "ledger_entries"("refund_id");

-- A reversal entry undoes, for its succeeded refund's amount, a leg its payment's capture booked on
-- the same account: so the reversals of a payment never exceed its capture on any account (the
-- refunds' sum is bounded above), and need not lock the account to check its balance.
CREATE FUNCTION ledger_check_refund_entry() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  refund refunds%ROWTYPE;
BEGIN
  IF NEW.refund_id IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT * INTO refund FROM refunds WHERE id = NEW.refund_id;
  IF NOT FOUND OR refund.status <> 'succeeded' OR refund.payment_id IS DISTINCT FROM NEW.payment_id
     OR refund.currency <> NEW.currency OR abs(NEW.amount_minor) <> refund.amount_minor
     OR NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = NEW.transaction_id AND t.refund_id = NEW.refund_id)
     OR NOT EXISTS (SELECT 1 FROM ledger_entries c
                     WHERE c.payment_id = NEW.payment_id AND c.refund_id IS NULL
                       AND c.ledger_account_id = NEW.ledger_account_id AND sign(c.amount_minor) = -sign(NEW.amount_minor)
                       AND abs(c.amount_minor) >= refund.amount_minor) THEN
    RAISE EXCEPTION 'ledger entry for refund % does not reverse its payment''s capture by the refund''s amount', NEW.refund_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_refund_reversal';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "ledger_entries_refund_reversal" BEFORE INSERT ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION ledger_check_refund_entry();

-- As in 20261201001500, except a refund's reversal: bounded by its payment's capture above, so it
-- takes no lock on the (shared) account row.
CREATE OR REPLACE FUNCTION ledger_check_no_forbidden_negative() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  account ledger_accounts%ROWTYPE;
  balance NUMERIC;
BEGIN
  IF NEW.refund_id IS NOT NULL THEN
    RETURN NULL;
  END IF;
  SELECT * INTO account FROM ledger_accounts WHERE id = NEW.ledger_account_id;
  IF account.may_go_negative OR (CASE WHEN account.normal_side = 'debit' THEN NEW.amount_minor ELSE -NEW.amount_minor END) > 0 THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM ledger_accounts WHERE id = NEW.ledger_account_id FOR NO KEY UPDATE;
  SELECT coalesce(sum(CASE WHEN account.normal_side = 'debit' THEN amount_minor ELSE -amount_minor END), 0)
    INTO balance FROM ledger_entries WHERE ledger_account_id = NEW.ledger_account_id;
  IF balance < 0 THEN
    RAISE EXCEPTION 'ledger account % (%) may not go negative: its balance would be %', account.code, account.currency, balance
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

-- The refund receipts the receipts service issues from refund.succeeded (one per refund).
CREATE TABLE "refund_receipts" (
    "id" BIGSERIAL NOT NULL,
    "number" TEXT NOT NULL,
    "refund_id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "message_id" TEXT NOT NULL,
    "amount_minor" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "reason" TEXT NOT NULL,
    "issued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refund_receipts_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "refund_receipts_number_key" ON "refund_receipts"("number");
CREATE UNIQUE INDEX "refund_receipts_refund_id_key" ON "refund_receipts"("refund_id");
CREATE INDEX "refund_receipts_order_id_idx" ON "refund_receipts"("order_id");
