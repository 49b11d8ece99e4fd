-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_id_idx" ON "idempotency_keys"("created_at" DESC, "id" DESC);
