-- A failed statement requirement carries a machine code (decision 0101): SQLSTATE IC001, the
-- code as CONSTRAINT and DETAIL. Verbatim from @idempotent-checkout/idempotency's migration.sql
-- (server/keys/schema.test.ts checks that the two agree).
CREATE OR REPLACE FUNCTION statement_require(ok BOOLEAN, reason TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'statement requirement failed: %', reason
      USING ERRCODE = 'IC001', CONSTRAINT = reason, DETAIL = reason;
  END IF;
  RETURN true;
END $$;
