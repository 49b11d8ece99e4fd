import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestCaller, EFFECTS_TABLE_SQL, hooks, runs } from "../test/idempotent-router";
import { keyHistory } from "../test/keys";

type Outcome =
  | { ok: true; data: unknown; headers: Headers }
  | { ok: false; error: TRPCError; headers: Headers };

async function call(
  account: TestAccount,
  key: string | null,
  input: Record<string, unknown>,
): Promise<Outcome> {
  const ctx = contextFor(account, key === null ? {} : { "idempotency-key": key });
  try {
    const data = await createTestCaller(ctx).effect(input as never);
    return { ok: true, data, headers: ctx.resHeaders };
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    return { ok: false, error, headers: ctx.resHeaders };
  }
}

const runsOf = (account: TestAccount, key: string) => runs.get(`${account.id}/${key}`) ?? 0;
const effectsOf = async (account: TestAccount) =>
  Number(
    (
      await db().$queryRaw<
        { n: bigint }[]
      >`SELECT count(*) AS n FROM idem_test_effects WHERE account_id = ${account.id}::uuid`
    )[0]?.n,
  );
const effectsOfKey = async (account: TestAccount, key: string) =>
  Number(
    (
      await db().$queryRaw<
        { n: bigint }[]
      >`SELECT count(*) AS n FROM idem_test_effects WHERE account_id = ${account.id}::uuid AND key = ${key}`
    )[0]?.n,
  );
const keysOf = (account: TestAccount) => db().idempotencyKey.findMany({ where: { accountId: account.id } });

let alice: TestAccount;
let bob: TestAccount;
beforeAll(async () => {
  await db().$executeRawUnsafe(EFFECTS_TABLE_SQL);
  alice = await createTestAccount("alice");
  bob = await createTestAccount("bob");
});

describe("concurrent duplicates", () => {
  it("20 identical requests run the handler once, 50 times over", async () => {
    for (let round = 0; round < 50; round++) {
      const key = randomUUID();
      const input = { amount: 500, note: `round ${round}`, sleepMs: 300 };
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => call(alice, key, input)));

      expect(runsOf(alice, key)).toBe(1);
      expect(await effectsOfKey(alice, key)).toBe(1);
      const fresh = outcomes.filter((o) => o.ok && o.headers.get("idempotent-replayed") === null);
      expect(fresh).toHaveLength(1);
      const first = fresh[0] as Outcome & { ok: true };
      for (const o of outcomes) {
        if (o === first) continue;
        if (o.ok) {
          expect(o.headers.get("idempotent-replayed")).toBe("true");
          expect(JSON.stringify(o.data)).toBe(JSON.stringify(first.data));
        } else {
          expect(o.error.code).toBe("CONFLICT");
          expect(Number(o.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        }
      }
    }
  }, 120_000);
});

describe("the contract", () => {
  it("replays the stored response exactly, without running the handler", async () => {
    const key = randomUUID();
    const first = await call(alice, key, { amount: 100, note: "a" });
    const again = await call(alice, key, { amount: 100, note: "a", traceId: "volatile" });
    expect(first.ok && again.ok).toBe(true);
    expect(JSON.stringify(again.ok && again.data)).toBe(JSON.stringify(first.ok && first.data));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(runsOf(alice, key)).toBe(1);
  });

  it("answers 422 for the same key with another request and never runs the handler", async () => {
    const key = randomUUID();
    await call(alice, key, { amount: 100, note: "a" });
    const other = await call(alice, key, { amount: 101, note: "a" });
    expect(!other.ok && other.error.code).toBe("UNPROCESSABLE_CONTENT");
    expect(runsOf(alice, key)).toBe(1);
  });

  it.each([
    ["missing", null],
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["a control character", "abc\u0007def"],
    ["a non-ASCII character", "clé-1"],
  ])("rejects a %s key with 400 and stores nothing", async (_label, key) => {
    const account = await createTestAccount("badkey");
    const result = await call(account, key, { amount: 1, note: "x" });
    expect(!result.ok && result.error.code).toBe("BAD_REQUEST");
    expect(await keysOf(account)).toHaveLength(0);
    expect(await effectsOf(account)).toBe(0);
  });

  it("accepts a 255-character key and a structured-field string", async () => {
    expect((await call(alice, "k".repeat(255), { amount: 1, note: "x" })).ok).toBe(true);
    const quoted = await call(alice, `"${randomUUID()}"`, { amount: 1, note: "x" });
    expect(quoted.ok).toBe(true);
  });

  it("scopes keys per account: B's use of A's key is a new request", async () => {
    const key = randomUUID();
    const a = await call(alice, key, { amount: 100, note: "mine" });
    const b = await call(bob, key, { amount: 999, note: "theirs" });
    expect(a.ok && b.ok).toBe(true);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect((b as { data: { amount: number } }).data.amount).toBe(999);
    expect(runsOf(bob, key)).toBe(1);
  });

  it("rejects an unauthenticated call with 401 and stores nothing", async () => {
    const key = randomUUID();
    const ctx = contextFor(null, { "idempotency-key": key });
    await expect(createTestCaller(ctx).effect({ amount: 1, note: "x" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    expect(await db().idempotencyKey.count({ where: { key } })).toBe(0);
    expect(await db().$queryRaw<unknown[]>`SELECT 1 FROM idem_test_effects WHERE key = ${key}`).toEqual([]);
  });

  it("does not store input validation failures", async () => {
    const key = randomUUID();
    const bad = await call(alice, key, { amount: 1.5, note: "x" });
    expect(!bad.ok && bad.error.code).toBe("BAD_REQUEST");
    expect(await db().idempotencyKey.count({ where: { accountId: alice.id, key } })).toBe(0);
    expect((await call(alice, key, { amount: 1, note: "x" })).ok).toBe(true);
  });

  it("stores a business outcome (402) and replays it", async () => {
    const key = randomUUID();
    const first = await call(alice, key, { amount: 7, note: "declined", fail: "business" });
    const again = await call(alice, key, { amount: 7, note: "declined", fail: "business" });
    expect(!first.ok && first.error.code).toBe("PAYMENT_REQUIRED");
    expect(!again.ok && again.error.code).toBe("PAYMENT_REQUIRED");
    expect(!again.ok && again.error.message).toBe(!first.ok && first.error.message);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(runsOf(alice, key)).toBe(1);
    const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: alice.id, key } });
    expect([row.state, row.responseStatus]).toEqual(["completed", 402]);
  });

  it("releases the key after an unexpected error: the immediate retry runs again and succeeds", async () => {
    const key = randomUUID();
    const failed = await call(alice, key, { amount: 5, note: "flaky", fail: "unexpected" });
    expect(!failed.ok && failed.error.code).toBe("INTERNAL_SERVER_ERROR");
    const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: alice.id, key } });
    expect([row.state, row.lockedUntil]).toEqual(["in_progress", null]);
    // The fingerprint covers amount and note only, so the retry is the same request.
    const retry = await call(alice, key, { amount: 5, note: "flaky" });
    expect(retry.ok).toBe(true);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(runsOf(alice, key)).toBe(2);
    expect(await effectsOfKey(alice, key)).toBe(1);
  });
});

describe("leases and fencing", () => {
  it("takes over an expired lease, completes once, and fences the stale owner", async () => {
    const account = await createTestAccount("fence");
    const key = randomUUID();
    let releaseStale!: () => void;
    let stuck = false;
    const staleReachedCompletion = new Promise<void>((reached) => {
      hooks.beforeComplete = async (k) => {
        if (k !== key || stuck) return;
        stuck = true;
        reached();
        await new Promise<void>((r) => {
          releaseStale = r;
        });
      };
    });
    const stale = call(account, key, { amount: 42, note: "lease" });
    await staleReachedCompletion;
    // The owner looks dead: its lease ran out while it was stuck.
    await db()
      .$executeRaw`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE account_id = ${account.id}::uuid AND key = ${key}`;

    const takeover = await call(account, key, { amount: 42, note: "lease" });
    releaseStale();
    const late = await stale;
    hooks.beforeComplete = undefined;

    expect(takeover.ok).toBe(true);
    expect(!late.ok && late.error.code).toBe("CONFLICT");
    expect(runsOf(account, key)).toBe(2);
    expect(await effectsOf(account)).toBe(1);
    const found = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    const row = { ...found, events: await keyHistory(db(), found.id) };
    expect(row.state).toBe("completed");
    expect(row.fence).toBe(2);
    expect(JSON.parse(JSON.stringify(row.responseBody))).toEqual({ data: takeover.ok && takeover.data });
    expect(row.events.map((e) => e.kind).sort()).toEqual(["claimed", "completed", "fenced", "taken_over"]);
    const replay = await call(account, key, { amount: 42, note: "lease" });
    expect(JSON.stringify(replay.ok && replay.data)).toBe(JSON.stringify(takeover.ok && takeover.data));
  });

  it("answers 409 with Retry-After while the owner's lease is live", async () => {
    const key = randomUUID();
    const slow = call(alice, key, { amount: 3, note: "slow", sleepMs: 400 });
    await new Promise((r) => setTimeout(r, 100));
    const dup = await call(alice, key, { amount: 3, note: "slow", sleepMs: 400 });
    expect(!dup.ok && dup.error.code).toBe("CONFLICT");
    expect(dup.headers.get("retry-after")).toBe("1");
    expect((await slow).ok).toBe(true);
  });

  it("renews the lease of a slow owner, so a duplicate is not let in after the lease length", async () => {
    const key = randomUUID();
    // leaseSeconds is 2 in the test router; this handler takes 3 s.
    const slow = call(alice, key, { amount: 4, note: "slower", sleepMs: 3000 });
    await new Promise((r) => setTimeout(r, 2500));
    const dup = await call(alice, key, { amount: 4, note: "slower", sleepMs: 3000 });
    expect(!dup.ok && dup.error.code).toBe("CONFLICT");
    expect((await slow).ok).toBe(true);
    expect(runsOf(alice, key)).toBe(1);
  });
});
