-- The table pgStore() keeps intents in. Put it in your own migrations; the name is yours
-- (pass it as pgStore({ pool, table })). A row lives from before a call's first attempt until
-- the caller forgets it: `answer` is null until the final answer, then holds it (so a caller
-- that crashed before it read the answer gets it again). A row without an answer older than the
-- call's deadline is a call to finish with resume().
CREATE TABLE IF NOT EXISTS payment_intents (
  intent_id       text PRIMARY KEY,
  idempotency_key text NOT NULL,
  request         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  answer          jsonb
);
-- A table made by the first version of this file gains the column.
ALTER TABLE payment_intents ADD COLUMN IF NOT EXISTS answer jsonb;
