-- Authorize now, capture later (issue 40, decision 0176). A manual-capture payment is
-- `authorized` while the provider holds its amount; an operator's capture takes all or part of it
-- (`succeeded`, `captured_minor`), a cancel or the deadline releases it (`canceled`). Capture and
-- cancel are keyed operations on one table whose open-or-done row is unique per payment: of two
-- racing, one wins. The ledger books the hold as pending entries; its release (once) with the
-- capture's posting, or alone for a void.

ALTER TABLE "payments"
  ADD COLUMN "capture_method" TEXT NOT NULL DEFAULT 'automatic',
  ADD COLUMN "captured_minor" INTEGER,
  ADD COLUMN "capture_before" TIMESTAMPTZ(3),
  ADD COLUMN "action_url" TEXT,
  ADD COLUMN "return_url" TEXT;
ALTER TABLE "payments" DROP CONSTRAINT "payments_status_check";
ALTER TABLE "payments" DROP CONSTRAINT "payments_succeeded_has_charge";
ALTER TABLE "payments"
  ADD CONSTRAINT "payments_status_check"
    CHECK ("status" IN ('pending', 'authorized', 'succeeded', 'declined', 'failed', 'canceled')),
  ADD CONSTRAINT "payments_succeeded_has_charge"
    CHECK ("status" NOT IN ('succeeded', 'authorized') OR "provider_charge_id" IS NOT NULL),
  ADD CONSTRAINT "payments_capture_method_check" CHECK ("capture_method" IN ('automatic', 'manual')),
  -- Captured at most what was authorized, and only by a succeeded payment.
  ADD CONSTRAINT "payments_captured_within_authorized"
    CHECK ("captured_minor" IS NULL OR ("captured_minor" > 0 AND "captured_minor" <= "amount_minor" AND "status" = 'succeeded')),
  ADD CONSTRAINT "payments_authorized_has_deadline" CHECK ("status" <> 'authorized' OR "capture_before" IS NOT NULL);

-- An authorized payment holds its order as a pending or succeeded one does.
DROP INDEX "payments_one_open_per_order";
ALTER TABLE "payments" DROP COLUMN "holds_order";
ALTER TABLE "payments" ADD COLUMN "holds_order" BOOLEAN
  GENERATED ALWAYS AS (CASE WHEN "status" IN ('pending', 'authorized', 'succeeded') THEN true END) STORED;
CREATE UNIQUE INDEX "payments_one_open_per_order" ON "payments"("order_id", "holds_order");
-- The expiry's pass: authorizations by deadline, soonest first. A deadline is set while a payment
-- is authorized and cleared when it is captured or canceled, so the index holds only the open
-- authorizations; it names no status, so an automatic payment's settlement stays a HOT update.
CREATE INDEX "payments_authorized_deadline_idx" ON "payments"("capture_before") WHERE "capture_before" IS NOT NULL;

ALTER TABLE "orders" DROP CONSTRAINT "orders_status_check";
ALTER TABLE "orders" ADD CONSTRAINT "orders_status_check" CHECK ("status" IN ('pending_payment', 'authorized', 'paid'));

CREATE TABLE "authorization_actions" (
    "id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "idempotency_key_id" BIGINT,
    "kind" TEXT NOT NULL,
    "amount_minor" INTEGER,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "provider_key" TEXT NOT NULL,
    "action_requested_at" TIMESTAMPTZ(3),
    "reason" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "authorization_actions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "authorization_actions_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "authorization_actions_kind_check" CHECK ("kind" IN ('capture', 'cancel')),
    CONSTRAINT "authorization_actions_status_check" CHECK ("status" IN ('pending', 'succeeded', 'failed')),
    CONSTRAINT "authorization_actions_amount_check" CHECK ("amount_minor" IS NULL OR ("kind" = 'capture' AND "amount_minor" > 0))
);
CREATE UNIQUE INDEX "authorization_actions_idempotency_key_id_key" ON "authorization_actions"("idempotency_key_id");
CREATE UNIQUE INDEX "authorization_actions_provider_key_key" ON "authorization_actions"("provider_key");
-- One capture or cancel per authorization: the open or succeeded one decides every other.
CREATE UNIQUE INDEX "authorization_actions_one_per_payment" ON "authorization_actions"("payment_id")
  WHERE "status" IN ('pending', 'succeeded');

-- An action is inserted for an authorized payment only, in its account, a capture within the hold;
-- a settled action is final.
CREATE FUNCTION authorization_actions_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payment payments%ROWTYPE;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.payment_id <> OLD.payment_id OR NEW.kind <> OLD.kind OR NEW.amount_minor IS DISTINCT FROM OLD.amount_minor THEN
      RAISE EXCEPTION 'an authorization action''s payment, kind and amount never change'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'authorization_actions_immutable';
    END IF;
    IF OLD.status <> 'pending' AND NEW.status <> OLD.status THEN
      RAISE EXCEPTION 'authorization action % is % already: a settled action is final', OLD.id, OLD.status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'authorization_actions_settled_final';
    END IF;
    RETURN NEW;
  END IF;
  SELECT * INTO payment FROM payments WHERE id = NEW.payment_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NEW; -- the foreign key refuses it
  END IF;
  IF payment.status <> 'authorized' OR NEW.account_id <> payment.account_id THEN
    RAISE EXCEPTION 'payment % is %: only an authorized payment is captured or canceled', payment.id, payment.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'authorization_actions_payment_authorized';
  END IF;
  IF NEW.amount_minor > payment.amount_minor THEN
    RAISE EXCEPTION 'a capture of % exceeds the % authorized', NEW.amount_minor, payment.amount_minor
      USING ERRCODE = 'check_violation', CONSTRAINT = 'authorization_actions_within_hold';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "authorization_actions_checked" BEFORE INSERT OR UPDATE ON "authorization_actions"
  FOR EACH ROW EXECUTE FUNCTION authorization_actions_check();

-- The ledger's pending side: a hold's legs, and its release's, are pending entries; the posted
-- balance leaves them out.
ALTER TABLE "ledger_entries" ADD COLUMN "pending" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_pending_types"
  CHECK ("pending" = ("entry_type" IN ('hold_clearing', 'hold_revenue', 'release_clearing', 'release_revenue')));
-- A hold resolves once: captured (its release written with the capture's posting) or voided.
CREATE UNIQUE INDEX "ledger_transactions_one_hold_resolution" ON "ledger_transactions"("payment_id")
  WHERE "kind" IN ('hold_captured', 'hold_voided');

-- At commit, for a payment with a hold: a release returns exactly the hold; a capture posts at most
-- the hold and comes with the hold's `hold_captured` release; a voided hold is never posted (the
-- one-resolution index refuses the capture's release after it).
CREATE FUNCTION ledger_check_hold() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held BIGINT;
  moved BIGINT;
BEGIN
  SELECT sum(e.amount_minor) INTO held FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
   WHERE t.payment_id = NEW.payment_id AND t.kind = 'authorization_hold' AND e.amount_minor > 0;
  SELECT sum(e.amount_minor) INTO moved FROM ledger_entries e WHERE e.transaction_id = NEW.id AND e.amount_minor > 0;
  IF NEW.kind IN ('hold_captured', 'hold_voided') THEN
    IF held IS NULL OR moved IS DISTINCT FROM held THEN
      RAISE EXCEPTION 'the release of payment %''s hold must return the % held (returns %)', NEW.payment_id, held, moved
        USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_hold_release';
    END IF;
    IF NEW.kind = 'hold_captured' AND NOT EXISTS (SELECT 1 FROM ledger_transactions
        WHERE payment_id = NEW.payment_id AND kind = 'payment_capture') THEN
      RAISE EXCEPTION 'payment %''s hold is released as captured without a capture', NEW.payment_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_hold_release';
    END IF;
  ELSIF NEW.kind = 'payment_capture' AND held IS NOT NULL THEN
    IF moved > held THEN
      RAISE EXCEPTION 'payment % captures % of the % held', NEW.payment_id, moved, held
        USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_capture_within_hold';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ledger_transactions WHERE payment_id = NEW.payment_id AND kind = 'hold_captured') THEN
      RAISE EXCEPTION 'payment % is captured without releasing its hold as captured (voided, or not released)', NEW.payment_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_capture_within_hold';
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER "ledger_transactions_hold" AFTER INSERT ON "ledger_transactions"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW."kind" IN ('authorization_hold', 'hold_captured', 'hold_voided', 'payment_capture') AND NEW."payment_id" IS NOT NULL)
  EXECUTE FUNCTION ledger_check_hold();

-- As in 20261203000300, with pending legs left out: a hold's legs move no posted balance, and a
-- refund reverses what was posted, never a hold.
CREATE OR REPLACE FUNCTION ledger_check_no_forbidden_negative() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  account ledger_accounts%ROWTYPE;
  balance NUMERIC;
BEGIN
  IF NEW.refund_id IS NOT NULL OR NEW.pending THEN
    RETURN NULL;
  END IF;
  SELECT * INTO account FROM ledger_accounts WHERE id = NEW.ledger_account_id;
  IF account.may_go_negative OR (CASE WHEN account.normal_side = 'debit' THEN NEW.amount_minor ELSE -NEW.amount_minor END) > 0 THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM ledger_accounts WHERE id = NEW.ledger_account_id FOR NO KEY UPDATE;
  SELECT coalesce(sum(CASE WHEN account.normal_side = 'debit' THEN amount_minor ELSE -amount_minor END), 0)
    INTO balance FROM ledger_entries WHERE ledger_account_id = NEW.ledger_account_id AND NOT pending;
  IF balance < 0 THEN
    RAISE EXCEPTION 'ledger account % (%) may not go negative: its balance would be %', account.code, account.currency, balance
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ledger_check_refund_entry() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  refund refunds%ROWTYPE;
BEGIN
  IF NEW.refund_id IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT * INTO refund FROM refunds WHERE id = NEW.refund_id;
  IF NOT FOUND OR refund.status <> 'succeeded' OR refund.payment_id IS DISTINCT FROM NEW.payment_id
     OR refund.currency <> NEW.currency OR abs(NEW.amount_minor) <> refund.amount_minor OR NEW.pending
     OR NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = NEW.transaction_id AND t.refund_id = NEW.refund_id)
     OR NOT EXISTS (SELECT 1 FROM ledger_entries c
                     WHERE c.payment_id = NEW.payment_id AND c.refund_id IS NULL AND NOT c.pending
                       AND c.ledger_account_id = NEW.ledger_account_id AND sign(c.amount_minor) = -sign(NEW.amount_minor)
                       AND abs(c.amount_minor) >= refund.amount_minor) THEN
    RAISE EXCEPTION 'ledger entry for refund % does not reverse its payment''s capture by the refund''s amount', NEW.refund_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_refund_reversal';
  END IF;
  RETURN NEW;
END $$;

-- As in 20261205003600, bounded by what was captured: a partial capture's refunds total at most it.
CREATE OR REPLACE FUNCTION refunds_check_within_captured() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payment payments%ROWTYPE;
  taken BIGINT;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.payment_id <> OLD.payment_id OR NEW.account_id <> OLD.account_id
       OR NEW.amount_minor <> OLD.amount_minor OR NEW.currency <> OLD.currency THEN
      RAISE EXCEPTION 'a refund''s payment, account, amount and currency never change'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_immutable', DETAIL = 'refunds_immutable';
    END IF;
    IF OLD.status <> 'pending' AND NEW.status <> OLD.status THEN
      RAISE EXCEPTION 'refund % is % already: a settled refund is final', OLD.id, OLD.status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_settled_final', DETAIL = 'refunds_settled_final';
    END IF;
    RETURN NEW;
  END IF;
  IF current_setting('transaction_isolation') = 'repeatable read' THEN
    RAISE EXCEPTION 'refunds are inserted under READ COMMITTED or SERIALIZABLE only'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_isolation_level', DETAIL = 'refunds_isolation_level';
  END IF;
  SELECT * INTO payment FROM payments WHERE id = NEW.payment_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NEW; -- the foreign key refuses it
  END IF;
  IF payment.status <> 'succeeded' THEN
    RAISE EXCEPTION 'payment % is %: only a succeeded payment is refunded', payment.id, payment.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_payment_succeeded', DETAIL = 'refunds_payment_succeeded';
  END IF;
  IF NEW.account_id <> payment.account_id OR NEW.currency <> payment.currency THEN
    RAISE EXCEPTION 'refund % is not in its payment''s account and currency', NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_payment_matches', DETAIL = 'refunds_payment_matches';
  END IF;
  IF NEW.status = 'failed' THEN
    RETURN NEW;
  END IF;
  SELECT coalesce(sum(amount_minor), 0) INTO taken FROM refunds
   WHERE payment_id = NEW.payment_id AND status IN ('pending', 'succeeded');
  IF taken + NEW.amount_minor > coalesce(payment.captured_minor, payment.amount_minor) THEN
    RAISE EXCEPTION 'refunds of payment % would total % of % captured', payment.id, taken + NEW.amount_minor, coalesce(payment.captured_minor, payment.amount_minor)
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_within_captured', DETAIL = 'refunds_within_captured';
  END IF;
  RETURN NEW;
END $$;
