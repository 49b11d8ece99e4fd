-- Fewer index entries and row locks per payment (issue 27 point 4, decision 0128). Measured per
-- payment with pg_walinspect by relation before this (claim + settlement, 300 payments): the
-- ledger's legs wrote 272 B into two indexes that one key serves, every capture locked both house
-- ledger accounts FOR KEY SHARE (108 B, and a multixact when two captures met), the payment had
-- an index for its order beside the one-open-per-order index, a receipt four unique indexes.

-- A ledger transaction has one leg per account: (transaction_id, ledger_account_id) is the legs'
-- key, and it serves "the legs of a transaction" as the transaction index did. `id` stays, as the
-- legs' order of posting, without an index.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_pkey";
DROP INDEX "ledger_entries_transaction_id_idx";
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("transaction_id", "ledger_account_id");

-- A leg's account: checked when the leg is written (the currency trigger below) instead of by
-- a foreign key, whose row lock every capture took on the same two house accounts. A ledger account
-- is never deleted nor renumbered (a trigger refuses both), so the check cannot go stale.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_ledger_account_id_fkey";

CREATE FUNCTION ledger_accounts_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger account % is kept for ever: its entries refer to it', OLD.id
    USING ERRCODE = 'restrict_violation', CONSTRAINT = 'ledger_accounts_kept';
END $$;
CREATE TRIGGER "ledger_accounts_kept" BEFORE DELETE OR UPDATE OF "id" ON "ledger_accounts"
  FOR EACH ROW EXECUTE FUNCTION ledger_accounts_are_kept();

-- As in 20261201001500, which already read the leg's account: a missing one is now refused here
-- (what the foreign key did, with its SQLSTATE and name).
CREATE OR REPLACE FUNCTION ledger_check_entry_currency() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  account_currency CHAR(3);
  account_code TEXT;
BEGIN
  SELECT currency, code INTO account_currency, account_code FROM ledger_accounts WHERE id = NEW.ledger_account_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger entry names ledger account %, which does not exist', NEW.ledger_account_id
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_entries_ledger_account_id_fkey';
  END IF;
  IF account_currency <> NEW.currency THEN
    RAISE EXCEPTION 'ledger entry in % posted to account % in %', NEW.currency, account_code, account_currency
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

-- The order's payments and its one open payment in one index: holds_order is true while the payment
-- holds its order and NULL once it does not (a unique index lets any number of NULLs share an
-- order). A settlement (pending -> succeeded) still leaves it as it was: a HOT update.
DROP INDEX "payments_one_open_per_order";
DROP INDEX "payments_order_id_idx";
ALTER TABLE "payments" DROP COLUMN "holds_order";
ALTER TABLE "payments" ADD COLUMN "holds_order" BOOLEAN
  GENERATED ALWAYS AS (CASE WHEN "status" IN ('pending', 'succeeded') THEN true END) STORED;
CREATE UNIQUE INDEX "payments_one_open_per_order" ON "payments"("order_id", "holds_order");

-- A receipt is known by its number: no second key. One receipt per order is unique, and with it one
-- per payment (a payment belongs to one order, an order has at most one succeeded payment).
ALTER TABLE "receipts" DROP CONSTRAINT "receipts_pkey";
DROP INDEX "receipts_number_key";
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_pkey" PRIMARY KEY ("number");
DROP INDEX "receipts_payment_id_key";
ALTER TABLE "receipts" DROP COLUMN "id";

-- A key's expiry is indexed for completed keys alone: a claim writes one index entry less. The sweep
-- finds completed keys past their expiry by this index, unfinished ones (few: in flight, or waiting
-- for the completer) by the recovery index, which holds every unfinished key.
DROP INDEX "idempotency_keys_expires_at_idx";
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at") WHERE "state" = 'completed';

-- No statement reads payments by account: the shopper's pages go through orders, the reconciler's
-- window reads by created_at alone (which this index, led by the account, did not serve either).
DROP INDEX "payments_account_id_created_at_idx";
