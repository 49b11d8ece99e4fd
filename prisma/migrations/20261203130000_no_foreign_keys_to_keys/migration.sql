-- No foreign key from a payment or a refund to the key that created it (decision 0126). Each one
-- locked the key row at the payment's first phase (a row-lock WAL record per payment), and its
-- ON DELETE SET NULL made the key sweep rewrite every payment a day later: a non-HOT update of
-- the payment with all its index entries, for a key kept 24 hours and a payment kept for ever.
-- The ids stay unique; a swept key's id is simply no longer found (bigserial ids are not reused).
ALTER TABLE "payments" DROP CONSTRAINT "payments_idempotency_key_id_fkey";
ALTER TABLE "refunds" DROP CONSTRAINT "refunds_idempotency_key_id_fkey";
