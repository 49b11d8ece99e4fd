-- A key sent as a structured-field string is stored serialised (decision 10): up to 255
-- characters of content, each possibly escaped, inside two quotes.
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_key_check";
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_key_check" CHECK (length("key") BETWEEN 1 AND 512);
