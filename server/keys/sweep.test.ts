import { randomBytes, randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createContextInner } from "../context";
import { closeClient, createPrismaClient, type Db } from "../db";
import { applyMigrations } from "../db/migrate";
import { contextFor, type TestAccount } from "../test/fixtures";
import { createTestCaller, ensureEffectsTable, runs } from "../test/idempotent-router";
import { claimTestKey, counters, keyHistory } from "../test/keys";
import { idempotency } from "./index";

const sweepExpiredKeys = idempotency.sweep;

// The sweep deletes every expired key in the database, so this file has a database of its own:
// the counts below are then exact, and other files' expired keys (the admin tests make some)
// are neither swept from under them nor counted here.
const adminUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL || "";
const dbName = `idem_sweep_${randomBytes(6).toString("hex")}`;
let prisma: Db;

async function withAdmin(sql: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  await withAdmin(`CREATE DATABASE "${dbName}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  await applyMigrations(url.toString());
  prisma = createPrismaClient(url.toString());
  await ensureEffectsTable(prisma);
});
afterAll(async () => {
  if (prisma) await closeClient(prisma);
  await withAdmin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
});
beforeEach(async () => {
  await sweepExpiredKeys(prisma);
});

async function createAccount(prefix: string): Promise<TestAccount> {
  const handle = `${prefix}_${randomBytes(6).toString("hex")}`;
  const account = await prisma.account.create({
    data: { id: randomUUID(), handle, name: handle, email: `${handle}@example.test` },
  });
  return { id: account.id, handle, name: handle, token: "" };
}

const callerFor = (account: TestAccount, key: string) =>
  createTestCaller(createContextInner({ ...contextFor(account, { "idempotency-key": key }), prisma }));

async function completedKey(account: TestAccount, key: string) {
  await callerFor(account, key).plain({ n: 1 });
}

/** A key whose request is still running (or died): claimed, never completed. */
async function inProgressKey(account: TestAccount, key: string, leaseSeconds = 600) {
  await claimTestKey(prisma, {
    accountId: account.id,
    key,
    procedure: "plain",
    fingerprint: "f".repeat(64),
    requestParams: { n: 1 },
    leaseSeconds,
    ttlSeconds: 86_400,
  });
}

async function setKeys(account: TestAccount, keys: string[], set: "expire" | "end lease" | "release") {
  if (set === "expire")
    await prisma.$executeRaw`UPDATE idempotency_keys SET expires_at = now() - interval '1 minute'
      WHERE account_id = ${account.id}::uuid AND key = ANY(${keys}::text[])`;
  else
    await prisma.$executeRaw`UPDATE idempotency_keys
      SET locked_until = CASE WHEN ${set} = 'release' THEN NULL ELSE now() - interval '1 second' END
      WHERE account_id = ${account.id}::uuid AND key = ANY(${keys}::text[])`;
}

const keysLeft = async (account: TestAccount) =>
  (await prisma.idempotencyKey.findMany({ where: { accountId: account.id }, select: { key: true } }))
    .map((k) => k.key)
    .sort();
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe("sweepExpiredKeys", () => {
  it("deletes exactly the expired keys, in bounded batches, and never one under a live lease", async () => {
    const account = await createAccount("sweep");
    const doneExpired = names("done-expired", 9);
    const doneLive = names("done-live", 3);
    const runningExpired = names("running-expired-live-lease", 2);
    const deadExpired = names("running-expired-lease-over", 2);
    const releasedExpired = names("released-expired", 1);
    const deadLive = names("running-lease-over-not-expired", 1);
    for (const k of [...doneExpired, ...doneLive]) await completedKey(account, k);
    for (const k of [...runningExpired, ...deadExpired, ...releasedExpired, ...deadLive])
      await inProgressKey(account, k);
    await setKeys(account, [...doneExpired, ...runningExpired, ...deadExpired, ...releasedExpired], "expire");
    await setKeys(account, [...deadExpired, ...deadLive], "end lease");
    await setKeys(account, releasedExpired, "release");
    const doomed = [...doneExpired, ...deadExpired, ...releasedExpired];
    const doomedIds = (
      await prisma.idempotencyKey.findMany({ where: { accountId: account.id, key: { in: doomed } } })
    ).map((k) => k.id);
    const sweptBefore = counters.processTotals().expired_swept;

    // 12 rows, 5 a batch, at most 2 batches: 10 now, the rest on the next run.
    expect(await sweepExpiredKeys(prisma, { batchSize: 5, maxBatches: 2 })).toBe(10);
    expect(await sweepExpiredKeys(prisma, { batchSize: 5, maxBatches: 2 })).toBe(2);
    expect(await sweepExpiredKeys(prisma, { batchSize: 5 })).toBe(0);

    expect(await keysLeft(account)).toEqual([...doneLive, ...runningExpired, ...deadLive].sort());
    expect(counters.processTotals().expired_swept - sweptBefore).toBe(12);
    expect(await prisma.idempotencyEvent.count({ where: { keyId: { in: doomedIds } } })).toBe(0);
  });

  it("two sweepers at once share the work and count every row once", async () => {
    const account = await createAccount("sweep2");
    const keys = names("k", 60);
    for (const k of keys) await completedKey(account, k);
    await setKeys(account, keys, "expire");

    const counts = await Promise.all([
      sweepExpiredKeys(prisma, { batchSize: 3, maxBatches: 30 }),
      sweepExpiredKeys(prisma, { batchSize: 3, maxBatches: 30 }),
    ]);
    expect(counts[0] + counts[1]).toBe(60);
    expect(await keysLeft(account)).toEqual([]);
  });

  it("skips a row another transaction holds instead of waiting for it", async () => {
    const account = await createAccount("sweep3");
    await completedKey(account, "held");
    await completedKey(account, "free");
    await setKeys(account, ["held", "free"], "expire");
    const held = await prisma.idempotencyKey.findFirstOrThrow({
      where: { accountId: account.id, key: "held" },
    });

    const whileHeld = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM idempotency_keys WHERE id = ${held.id} FOR UPDATE`;
      const started = performance.now();
      const n = await sweepExpiredKeys(prisma);
      return { n, ms: performance.now() - started };
    });
    expect(whileHeld.n).toBe(1);
    expect(whileHeld.ms).toBeLessThan(2000);
    expect(await keysLeft(account)).toEqual(["held"]);
    expect(await sweepExpiredKeys(prisma)).toBe(1);
  });
});

describe("an expired key not yet swept", () => {
  const call = async (
    account: TestAccount,
    key: string,
    input: { amount: number; note: string; sleepMs?: number; fail?: "unexpected" },
  ) => {
    const ctx = createContextInner({ ...contextFor(account, { "idempotency-key": key }), prisma });
    try {
      return { data: await createTestCaller(ctx).effect(input), headers: ctx.resHeaders };
    } catch (error) {
      if (!(error instanceof TRPCError)) throw error;
      return { error, headers: ctx.resHeaders };
    }
  };

  it.each([
    ["the same request", { amount: 10, note: "again" }],
    ["another request (not a 422)", { amount: 11, note: "different" }],
  ])("reused with %s runs the handler again as a new request", async (_label, second) => {
    const account = await createAccount("reuse");
    const key = randomUUID();
    await call(account, key, { amount: 10, note: "again" });
    const old = await prisma.idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    await setKeys(account, [key], "expire");

    const reused = await call(account, key, second);
    expect(reused.error).toBeUndefined();
    expect(reused.headers.get("idempotent-replayed")).toBeNull();
    expect(reused.data).toMatchObject(second);
    expect(runs.get(`${account.id}/${key}`)).toBe(2);

    const row = await prisma.idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    const fresh = { ...row, events: await keyHistory(prisma, row.id) };
    expect(fresh.id).not.toBe(old.id);
    expect([fresh.state, fresh.fence, fresh.requestParams]).toEqual(["completed", 1, second]);
    expect(fresh.events.map((e) => e.kind).sort()).toEqual(["claimed", "completed"]);
    // Read from the row (decision 0105): a key whose life went as it should stores no event rows.
    const stored = await prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM idempotency_key_events WHERE key_id = ${row.id}`;
    expect(stored[0]?.n).toBe(0);
    // And the new request is the one replayed from now on.
    const replay = await call(account, key, second);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.stringify(replay.data)).toBe(JSON.stringify(reused.data));
    expect(runs.get(`${account.id}/${key}`)).toBe(2);
  });

  it("released after an unexpected error and then expired, is a new request (not a 409 for ever)", async () => {
    const account = await createAccount("reuse-released");
    const key = randomUUID();
    const failed = await call(account, key, { amount: 13, note: "flaky", fail: "unexpected" });
    expect(failed.error?.code).toBe("INTERNAL_SERVER_ERROR");
    await setKeys(account, [key], "expire");

    const reused = await call(account, key, { amount: 14, note: "later" });
    expect(reused.error).toBeUndefined();
    expect(reused.data).toMatchObject({ amount: 14, note: "later" });
    expect(runs.get(`${account.id}/${key}`)).toBe(2);
  });

  it("is not reused while its request is still running under a live lease", async () => {
    const account = await createAccount("reuse-live");
    const key = randomUUID();
    const input = { amount: 12, note: "slow", sleepMs: 600 };
    const slow = call(account, key, input);
    await new Promise((r) => setTimeout(r, 150));
    await setKeys(account, [key], "expire");

    const dup = await call(account, key, input);
    expect(dup.error?.code).toBe("CONFLICT");
    expect(await sweepExpiredKeys(prisma)).toBe(0);
    expect((await slow).error).toBeUndefined();
    expect(runs.get(`${account.id}/${key}`)).toBe(1);
  });

  it("keeps an abandoned key that recorded progress: it is resumed, never swept or restarted", async () => {
    const account = await createAccount("reuse-progressed");
    const key = randomUUID();
    await inProgressKey(account, key);
    await prisma.$executeRaw`UPDATE idempotency_keys SET recovery_point = 'effect_written', locked_until = NULL,
      expires_at = now() - interval '1 minute' WHERE account_id = ${account.id}::uuid AND key = ${key}`;
    expect(await sweepExpiredKeys(prisma)).toBe(0);
    const before = await prisma.idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });

    // A reuse with another request is the same key's request: 422, not a fresh start.
    const other = await call(account, key, { amount: 99, note: "other" });
    expect(other.error?.code).toBe("UNPROCESSABLE_CONTENT");
    const after = await prisma.idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    expect(after.id).toBe(before.id);
  });
});
