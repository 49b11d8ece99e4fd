-- Retention (decision 0222): the prune finds old rows by these, a batch at a time, without
-- reading the table. Sent outbox rows by when they were sent; the consumers' marks by when.
CREATE INDEX "outbox_messages_sent_idx" ON "outbox_messages"("sent_at") WHERE "sent_at" IS NOT NULL;
CREATE INDEX "processed_messages_processed_at_idx" ON "processed_messages"("processed_at");
