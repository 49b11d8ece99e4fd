-- Cheaper keys (issue 27 point 4, decisions 0105 and 0106).
--
-- A key's ordinary life (claimed, its first phase with the claim, completed) is read from the key
-- row itself: created_at, claim_point and completed_at. Only the unusual events (takeovers,
-- releases, pauses, refusals, fenced attempts, progress after the claim, operators' re-drives)
-- are rows of idempotency_key_events. The admin reads both through idempotency_key_history.
ALTER TABLE "idempotency_keys" ADD COLUMN "claim_point" TEXT;

-- The ordinary events already stored become the row's: the first phase that committed with the
-- claim (same transaction, so the same time, at fence 1) is the claim point.
UPDATE "idempotency_keys" k SET "claim_point" = e."detail"
  FROM "idempotency_key_events" e
 WHERE e."key_id" = k."id" AND e."kind" = 'progressed' AND e."fence" = 1 AND e."at" = k."created_at";
DELETE FROM "idempotency_key_events" e USING "idempotency_keys" k
 WHERE e."key_id" = k."id"
   AND (e."kind" = 'claimed'
        OR (e."kind" = 'progressed' AND e."fence" = 1 AND e."at" = k."created_at")
        OR (e."kind" = 'completed' AND k."state" = 'completed'));

-- No statement needs it: the completer and its backlog read the partial recovery index, the
-- sweep the expiry index, the admin's lists the keyset index. One index less to write at every
-- claim and completion.
DROP INDEX "idempotency_keys_state_locked_until_idx";

-- No foreign key from a key to its account (decision 0108): every claim took a FOR KEY SHARE lock
-- on the account's row, and concurrent payments of one account turned it into a multixact, written
-- to the WAL with all its members. Nothing deletes accounts; the key is scoped to its account by
-- the unique (account_id, key) and by the authentication that supplies account_id.
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_account_id_fkey";

-- The key's whole history, oldest first by (at, seq): derived lines and stored events alike.
CREATE VIEW "idempotency_key_history" AS
  SELECT k."id" AS "key_id", -1::bigint AS "id", 0::bigint AS "seq", 'claimed'::text AS "kind",
         1 AS "fence", NULL::text AS "detail", k."created_at" AS "at"
    FROM "idempotency_keys" k
  UNION ALL
  SELECT k."id", -2, 1, 'progressed', 1, k."claim_point", k."created_at"
    FROM "idempotency_keys" k WHERE k."claim_point" IS NOT NULL
  UNION ALL
  SELECT e."key_id", e."id", 2 + e."id", e."kind", e."fence", e."detail", e."at"
    FROM "idempotency_key_events" e
  UNION ALL
  SELECT k."id", -3, 9223372036854775807, 'completed', k."fence", k."response_status"::text,
         coalesce(k."completed_at", k."updated_at")
    FROM "idempotency_keys" k WHERE k."state" = 'completed';
