-- A phase written as one statement (decision 0016) needs a way to roll itself back when a write
-- it depends on matched nothing: the key's fence, say, or the payment still pending. This raises
-- inside the statement, so nothing of it commits.
CREATE FUNCTION statement_require(ok BOOLEAN, reason TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'statement requirement failed: %', reason USING ERRCODE = 'check_violation';
  END IF;
  RETURN true;
END $$;
