import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { adminCaller, insertKey } from "../test/admin";
import { createTestAccount, type TestAccount } from "../test/fixtures";

const admin = adminCaller();

let account: TestAccount;
beforeAll(async () => {
  account = await createTestAccount("keys");
});

/** Every page of a listing, following nextCursor. */
async function allPages(input: Parameters<typeof admin.admin.keys.list>[0]) {
  const pages = [];
  let cursor: string | undefined;
  do {
    const page = await admin.admin.keys.list({ ...input, ...(cursor ? { cursor } : {}) });
    pages.push(page);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && pages.length < 50);
  return pages;
}

describe("admin.keys.list", () => {
  it("tells the five display states apart and filters by each in SQL", async () => {
    const { id: accountId } = await createTestAccount("states");
    const keys = {
      completed: await insertKey({ accountId, key: "done", state: "completed", responseStatus: 200 }),
      running: await insertKey({ accountId, key: "running", lockedFor: 30 }),
      leaseRanOut: await insertKey({ accountId, key: "lease-ran-out", lockedFor: -5 }),
      released: await insertKey({ accountId, key: "released", lockedFor: null }),
      expiredCompleted: await insertKey({ accountId, key: "old-done", state: "completed", expiresIn: -1 }),
      // Unfinished work is never "expired", however old: running, or waiting for someone.
      oldRunning: await insertKey({ accountId, key: "old-running", lockedFor: 30, expiresIn: -1 }),
      oldUnstarted: await insertKey({ accountId, key: "old-unstarted", lockedFor: null, expiresIn: -1 }),
      completerFailing: await insertKey({
        accountId,
        key: "completer-failing",
        lockedFor: null,
        recoveryPoint: "payment_created",
        completerAttempts: 5,
      }),
      agedTwoDays: await insertKey({
        accountId,
        key: "aged",
        lockedFor: -60,
        recoveryPoint: "payment_created",
        expiresIn: -86_400,
        createdAt: new Date(Date.now() - 2 * 86_400_000),
      }),
    };
    const expected = {
      completed: [keys.completed],
      in_progress: [keys.running, keys.oldRunning],
      needs_attention: [keys.completerFailing, keys.agedTwoDays],
      abandoned: [keys.leaseRanOut, keys.released, keys.oldUnstarted],
      expired: [keys.expiredCompleted],
    } as const;
    for (const [state, ids] of Object.entries(expected)) {
      const { items } = await admin.admin.keys.list({ accountId, state: state as keyof typeof expected });
      expect(items.map((k) => k.id).sort(), state).toEqual(ids.map(String).sort());
      expect(new Set(items.map((k) => k.state))).toEqual(new Set([state]));
    }
    const all = await admin.admin.keys.list({ accountId });
    expect(all.items).toHaveLength(9);
    expect(all.items.find((k) => k.key === "done")).toMatchObject({
      state: "completed",
      responseStatus: 200,
      procedure: "test.procedure",
      accountHandle: expect.stringMatching(/^states_/),
    });
  });

  it("pages newest first by keyset on the id: nothing repeats or goes missing", async () => {
    const { id: accountId } = await createTestAccount("pages");
    const sameInstant = new Date(Date.now() - 60_000);
    const ids: bigint[] = [];
    for (let i = 0; i < 8; i++) {
      // Keys 2-5 share one created_at, so only the id orders them.
      const createdAt = i >= 2 && i <= 5 ? sameInstant : new Date(sameInstant.getTime() + (i - 5) * 1000);
      ids.push(await insertKey({ accountId, key: `page-${i}`, lockedFor: 30, createdAt }));
    }
    const pages = await allPages({ accountId, limit: 3 });
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 2]);
    expect(pages.at(-1)?.nextCursor).toBeNull();
    const listed = pages.flatMap((p) => p.items);
    // Ids are handed out in claim order: newest first is highest id first, ties on created_at too.
    const byNewest = [...listed].sort((a, b) => Number(BigInt(b.id) - BigInt(a.id)));
    expect(listed.map((k) => k.id)).toEqual(byNewest.map((k) => k.id));
    expect(listed.map((k) => k.id).sort()).toEqual(ids.map(String).sort());
  });

  it("keeps the next page stable while new keys arrive (where OFFSET would shift it)", async () => {
    const { id: accountId } = await createTestAccount("stable");
    for (let i = 0; i < 5; i++) await insertKey({ accountId, key: `stable-${i}`, lockedFor: 30 });
    const first = await admin.admin.keys.list({ accountId, limit: 2 });
    const cursor = first.nextCursor ?? "";
    const before = await admin.admin.keys.list({ accountId, limit: 2, cursor });
    await insertKey({ accountId, key: "stable-newer", lockedFor: 30 });
    await insertKey({ accountId, key: "stable-newest", lockedFor: 30 });
    const after = await admin.admin.keys.list({ accountId, limit: 2, cursor });
    expect(after.items.map((k) => k.key)).toEqual(before.items.map((k) => k.key));
    expect(after.items.map((k) => k.key)).not.toContain(first.items[0]?.key);
  });

  it("searches by a part of the key, taking % and _ literally, and filters by account handle", async () => {
    const other = await createTestAccount("search");
    const tag = randomUUID().slice(0, 8);
    await insertKey({ accountId: account.id, key: `${tag}-50%_off`, lockedFor: 30 });
    await insertKey({ accountId: account.id, key: `${tag}-500-off`, lockedFor: 30 });
    await insertKey({ accountId: other.id, key: `${tag}-50%_off`, lockedFor: 30 });

    const literal = await admin.admin.keys.list({ search: `${tag}-50%_`.toUpperCase() });
    expect(literal.items.map((k) => k.accountHandle).sort()).toEqual([account.handle, other.handle].sort());
    const broad = await admin.admin.keys.list({ search: tag, accountHandle: account.handle });
    expect(broad.items.map((k) => k.key).sort()).toEqual([`${tag}-500-off`, `${tag}-50%_off`].sort());
  });

  it("refuses a cursor it did not issue, one with an id above the int8 range included", async () => {
    const overflow = Buffer.from("k9223372036854775808").toString("base64url");
    for (const cursor of ["bm90LWEtY3Vyc29y", overflow]) {
      await expect(admin.admin.keys.list({ cursor }), cursor).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
  });
});

describe("admin.keys.get", () => {
  it("finds a key by its row id or by account and key, with its history; NOT_FOUND otherwise", async () => {
    const id = await insertKey({
      accountId: account.id,
      key: "lookup",
      state: "completed",
      responseStatus: 201,
    });
    const byId = await admin.admin.keys.get({ id: String(id) });
    expect(byId).toMatchObject({
      id: String(id),
      key: "lookup",
      state: "completed",
      fingerprint: "f".repeat(64),
      requestParams: { amount: 1 },
      responseStatus: 201,
      responseBody: { data: { ok: true } },
      payment: null,
    });
    expect(await admin.admin.keys.get({ accountId: account.id, key: "lookup" })).toEqual(byId);
    await expect(admin.admin.keys.get({ id: "999999999999" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(admin.admin.keys.get({ accountId: account.id, key: "nope" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});

describe("admin.keys.counts", () => {
  it("counts keys by display state", async () => {
    const before = await admin.admin.keys.counts();
    const { id: accountId } = await createTestAccount("counts");
    await insertKey({ accountId, key: "a", lockedFor: -1 });
    await insertKey({ accountId, key: "b", lockedFor: null });
    const after = await admin.admin.keys.counts();
    expect(after.abandoned - before.abandoned).toBeGreaterThanOrEqual(2);
    expect(Object.keys(after).sort()).toEqual([
      "abandoned",
      "completed",
      "expired",
      "in_progress",
      "needs_attention",
    ]);
  });
});
