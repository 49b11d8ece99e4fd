-- The trigger's isolation guard raises a code of its own, refunds_isolation_level, no longer the
-- over-refund's refunds_within_captured: a misuse of the database (an insert under REPEATABLE
-- READ) is not a refund that exceeds its payment, and was answered as one (422). Otherwise as in
-- 20261203002100_refund_refusal_details (issue 36).
CREATE OR REPLACE FUNCTION refunds_check_within_captured() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payment payments%ROWTYPE;
  taken BIGINT;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.payment_id <> OLD.payment_id OR NEW.account_id <> OLD.account_id
       OR NEW.amount_minor <> OLD.amount_minor OR NEW.currency <> OLD.currency THEN
      RAISE EXCEPTION 'a refund''s payment, account, amount and currency never change'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_immutable', DETAIL = 'refunds_immutable';
    END IF;
    IF OLD.status <> 'pending' AND NEW.status <> OLD.status THEN
      RAISE EXCEPTION 'refund % is % already: a settled refund is final', OLD.id, OLD.status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_settled_final', DETAIL = 'refunds_settled_final';
    END IF;
    RETURN NEW;
  END IF;
  IF current_setting('transaction_isolation') = 'repeatable read' THEN
    RAISE EXCEPTION 'refunds are inserted under READ COMMITTED or SERIALIZABLE only'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_isolation_level', DETAIL = 'refunds_isolation_level';
  END IF;
  SELECT * INTO payment FROM payments WHERE id = NEW.payment_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NEW; -- the foreign key refuses it
  END IF;
  IF payment.status <> 'succeeded' THEN
    RAISE EXCEPTION 'payment % is %: only a succeeded payment is refunded', payment.id, payment.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_payment_succeeded', DETAIL = 'refunds_payment_succeeded';
  END IF;
  IF NEW.account_id <> payment.account_id OR NEW.currency <> payment.currency THEN
    RAISE EXCEPTION 'refund % is not in its payment''s account and currency', NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_payment_matches', DETAIL = 'refunds_payment_matches';
  END IF;
  IF NEW.status = 'failed' THEN
    RETURN NEW;
  END IF;
  SELECT coalesce(sum(amount_minor), 0) INTO taken FROM refunds
   WHERE payment_id = NEW.payment_id AND status IN ('pending', 'succeeded');
  IF taken + NEW.amount_minor > payment.amount_minor THEN
    RAISE EXCEPTION 'refunds of payment % would total % of % captured', payment.id, taken + NEW.amount_minor, payment.amount_minor
      USING ERRCODE = 'check_violation', CONSTRAINT = 'refunds_within_captured', DETAIL = 'refunds_within_captured';
  END IF;
  RETURN NEW;
END $$;
