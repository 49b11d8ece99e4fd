-- The console's amount search (decision 0232): with a million payments, an amount that no row has
-- walked the whole newest-first index (0.75 s). An amount is set when its payment or order is made
-- and never updated (settlements change status, captured_minor, capture_before), so an index on it
-- keeps those updates HOT (decisions 0127, 0128); it costs one more index entry per insert.
CREATE INDEX "payments_amount_minor_created_at_id_idx" ON "payments"("amount_minor", "created_at" DESC, "id" DESC);
CREATE INDEX "orders_total_minor_created_at_id_idx" ON "orders"("total_minor", "created_at" DESC, "id" DESC);
