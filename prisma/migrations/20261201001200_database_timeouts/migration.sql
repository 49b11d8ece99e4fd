-- Bounds for every session of this database, so that one stuck request cannot hold locks or a
-- connection for ever. Database settings rather than connection startup parameters: PgBouncer in
-- transaction mode refuses those. They apply to sessions opened after this commits; the migration
-- runner lifts them for its own transactions.
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET statement_timeout = %L', current_database(), '30s');
  EXECUTE format('ALTER DATABASE %I SET idle_in_transaction_session_timeout = %L', current_database(), '60s');
END
$$;
