import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { db } from "../db";
import { env } from "../env";
import { createTestAccount } from "../test/fixtures";
import { authenticate } from "./authenticate";

// Decision 0129: the API key's statement also reads the request's Idempotency-Key when it is
// completed, so that a replay sends no claim of its own.
const secrets = { sessionSecret: env.SESSION_SECRET, adminToken: env.ADMIN_TOKEN };
const headersFor = (token: string, key?: string) =>
  new Headers({ authorization: `Bearer ${token}`, ...(key === undefined ? {} : { "idempotency-key": key }) });

async function plantKey(accountId: string, key: string, state: "in_progress" | "completed") {
  await db().$executeRaw`
    INSERT INTO idempotency_keys (account_id, key, procedure, fingerprint, request_params, lease_seconds,
                                  locked_until, expires_at, state, response_status, response_body)
    VALUES (${accountId}::uuid, ${key}, 'payments.create', ${"d".repeat(64)}, '{}', 30, now(),
            now() + interval '1 h', ${state},
            ${state === "completed" ? 200 : null}, ${state === "completed" ? '{"data":{"ok":1}}' : null}::json)`;
}

it("an API key's authentication reads the request's completed key, and nothing else", async () => {
  const alice = await createTestAccount("peek");
  const [done, running] = [randomUUID(), randomUUID()];
  await plantKey(alice.id, done, "completed");
  await plantKey(alice.id, running, "in_progress");

  const found = await authenticate(db(), headersFor(alice.token, done), secrets);
  expect(found.account?.id).toBe(alice.id);
  expect(found.peekedKey).toMatchObject({
    accountId: alice.id,
    key: done,
    fingerprint: "d".repeat(64),
    response: { data: { ok: 1 } },
  });
  expect((await authenticate(db(), headersFor(alice.token, running), secrets)).peekedKey).toBeNull();
  expect((await authenticate(db(), headersFor(alice.token, randomUUID()), secrets)).peekedKey).toBeNull();
  // No header, or one the layer refuses: no read at all.
  expect((await authenticate(db(), headersFor(alice.token), secrets)).peekedKey).toBeNull();
  expect((await authenticate(db(), headersFor(alice.token, ""), secrets)).peekedKey).toBeNull();
  // Another account's key of the same name is not alice's.
  const bob = await createTestAccount("peek");
  expect((await authenticate(db(), headersFor(bob.token, done), secrets)).peekedKey).toBeNull();
});
