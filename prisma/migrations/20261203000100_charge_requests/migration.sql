-- When a charge request for the payment may last have left for the provider (the database's
-- time, committed before the request is sent). NULL: no request ever left, so the payment may be
-- abandoned with "nothing charged"; set: it is only ever driven to the provider's answer by
-- re-sending with the same provider key (issue 25, decision 0050).
ALTER TABLE "payments" ADD COLUMN "charge_requested_at" TIMESTAMPTZ(3);
