-- No hot rows (decision 0015): a posting no longer writes its accounts' rows. Every payment used
-- to lock the two house accounts FOR UPDATE to move a running balance, so payments queued behind
-- each other's whole transactions. Balances are now the sum of their entries.
DROP TRIGGER "ledger_entries_apply" ON "ledger_entries";
DROP FUNCTION ledger_apply_entry();
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_no_forbidden_negative";
ALTER TABLE "ledger_accounts" DROP COLUMN "balance_minor";

-- An entry is in its account's currency; read without a lock (the foreign key's KEY SHARE lock
-- is shared by every posting and never waits for another).
CREATE FUNCTION ledger_check_entry_currency() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  account_currency CHAR(3);
  account_code TEXT;
BEGIN
  SELECT currency, code INTO account_currency, account_code FROM ledger_accounts WHERE id = NEW.ledger_account_id;
  IF FOUND AND account_currency <> NEW.currency THEN
    RAISE EXCEPTION 'ledger entry in % posted to account % in %', NEW.currency, account_code, account_currency
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "ledger_entries_currency" BEFORE INSERT ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION ledger_check_entry_currency();

-- Only an entry that lowers an account's balance can take it below zero. Such an entry locks its
-- account at commit (FOR NO KEY UPDATE: not in conflict with the foreign keys' KEY SHARE of the
-- postings that raise it), then checks the sum of the committed entries and its own. Lowering
-- postings of one account therefore queue for each other's commit; raising ones, every payment
-- capture among them, never wait. Under READ COMMITTED each statement here sees what committed
-- before it, so a balance checked after the lock is never higher than the real one.
CREATE FUNCTION ledger_check_no_forbidden_negative() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  account ledger_accounts%ROWTYPE;
  balance NUMERIC;
BEGIN
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
CREATE CONSTRAINT TRIGGER "ledger_entries_no_forbidden_negative" AFTER INSERT ON "ledger_entries"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_no_forbidden_negative();
