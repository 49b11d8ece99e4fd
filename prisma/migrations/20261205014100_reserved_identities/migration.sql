-- The operators' account (decision 0110) exists before anyone can sign up (decision 0147): its
-- address is on .invalid, which sign-up refuses. A shopper who took that address first keeps the
-- account under an address of its own on .invalid, so refunds never fail on the operators' row.
UPDATE "accounts" SET "email" = "id"::text || '@squatted.invalid'
 WHERE "email" = 'operators@operators.invalid' AND "id" <> '01900000-0000-7000-8000-0000000000a1';

INSERT INTO "accounts" ("id", "handle", "name", "email")
VALUES ('01900000-0000-7000-8000-0000000000a1', 'operators', 'Operators', 'operators@operators.invalid')
ON CONFLICT ("id") DO NOTHING;
