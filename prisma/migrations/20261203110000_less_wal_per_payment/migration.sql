-- Less WAL per payment (issue 27 point 4, decision 0123), measured with pg_walinspect first.
--
-- Room on each page for the row versions a payment's updates write: a key's completion, the
-- payment's settlement, the order's "paid" and the outbox row's "sent" each write a new version of
-- a row inserted moments before. With full pages (fillfactor 100) that version went to another
-- page: the whole row logged again, and never a HOT update. On the same page PostgreSQL logs only
-- the bytes that changed, and an update that changes no indexed column stays HOT.
ALTER TABLE "idempotency_keys" SET (fillfactor = 70);
ALTER TABLE "payments" SET (fillfactor = 70);
ALTER TABLE "orders" SET (fillfactor = 80);
ALTER TABLE "outbox_messages" SET (fillfactor = 70);

-- Entries for rows that have no value to find: a capture's legs have no refund, a pending payment
-- no charge yet. Nothing looks them up by NULL; the unique charge id stays unique.
DROP INDEX "ledger_entries_refund_id_idx";
CREATE INDEX "ledger_entries_refund_id_idx" ON "ledger_entries"("refund_id") WHERE "refund_id" IS NOT NULL;
DROP INDEX "payments_provider_charge_id_key";
CREATE UNIQUE INDEX "payments_provider_charge_id_key" ON "payments"("provider_charge_id") WHERE "provider_charge_id" IS NOT NULL;
