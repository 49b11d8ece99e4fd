-- Two indexes no statement needs (issue 27 point 4, decision 0125); each cost B-tree inserts on
-- every payment.
--
-- The admin's key list pages newest first by the key's id, handed out in claim order: the primary
-- key serves it, as it serves "older than this id".
DROP INDEX "idempotency_keys_created_at_id_idx";
-- Ledger entries post to the house accounts alone: two values, half the table each, and every
-- balance sums the whole account (server/ledger/verify.ts). Nothing deletes a ledger account.
DROP INDEX "ledger_entries_ledger_account_id_idx";
