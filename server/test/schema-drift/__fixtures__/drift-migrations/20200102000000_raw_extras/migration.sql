-- Raw SQL that schema.prisma cannot express: none of this counts as drift.
ALTER TABLE "orders" ADD CONSTRAINT "orders_retries_check" CHECK ("retries" >= 0);

CREATE UNIQUE INDEX "orders_one_pending_per_customer" ON "orders"("customer_id") WHERE "status" = 'PENDING';

CREATE INDEX "customers_email_lower_idx" ON "customers"(lower("email"));

CREATE FUNCTION "touch_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."updated_at" := now();
  RETURN NEW;
END
$$;

CREATE TRIGGER "orders_touch" BEFORE UPDATE ON "orders" FOR EACH ROW EXECUTE FUNCTION "touch_updated_at"();
