-- Keys that grow at the end of their indexes (decision 0130).
--
-- The admin's newest ledger transactions page by id (a UUIDv7, in time order, as every posting in
-- server/ledger writes it): the primary key serves it, and a capture writes one index entry less
-- (decision 0130).
DROP INDEX "ledger_transactions_created_at_idx";

-- A message id is `<subject id>:<topic>` from now on (decision 0130); those already written keep
-- `<topic>:<subject id>`.
ALTER TABLE "outbox_messages" DROP CONSTRAINT "outbox_messages_id_check";
ALTER TABLE "outbox_messages" ADD CONSTRAINT "outbox_messages_id_check"
  CHECK ("id" LIKE '%:' || "topic" OR "id" LIKE "topic" || ':%');
