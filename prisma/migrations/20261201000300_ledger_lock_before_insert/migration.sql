-- Concurrent postings deadlocked: each entry's foreign-key check took a KEY SHARE lock on the
-- account row, then the AFTER trigger tried to upgrade it to FOR UPDATE while another posting
-- held KEY SHARE too. Taking the row lock BEFORE the insert means it is never an upgrade.
DROP TRIGGER "ledger_entries_apply" ON "ledger_entries";
CREATE TRIGGER "ledger_entries_apply" BEFORE INSERT ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION ledger_apply_entry();
