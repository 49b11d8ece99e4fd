-- The table pgStore() keeps intents in. Put it in your own migrations; the name is yours
-- (pass it as pgStore({ pool, table })). A row lives from before a call's first attempt until
-- its final answer: a row older than the call's deadline is a call to finish with resume().
CREATE TABLE IF NOT EXISTS payment_intents (
  intent_id       text PRIMARY KEY,
  idempotency_key text NOT NULL,
  request         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
