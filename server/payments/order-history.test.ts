import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder } from "../test/payments";
import { listOrdersOfAccount } from "./order-history";

let alice: TestAccount;
let bob: TestAccount;
const placed: string[] = [];

beforeAll(async () => {
  [alice, bob] = await Promise.all([createTestAccount("history"), createTestAccount("history")]);
  // Five orders, two of them at the same instant: the cursor must still neither skip nor repeat.
  const at = ["2026-03-01T10:00:00Z", "2026-03-02T10:00:00Z", "2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z"];
  for (const createdAt of [...at, "2026-03-04T10:00:00Z"]) {
    const order = await createTestOrder(alice);
    await db().order.update({ where: { id: order.id }, data: { createdAt: new Date(createdAt) } });
    placed.push(order.id);
  }
  await createTestOrder(bob);
});

describe("an account's order history", () => {
  it("pages the account's own orders newest first, each once, with status, total and item count", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await listOrdersOfAccount(db(), alice.id, { limit: 2, cursor });
      expect(page.orders.length).toBeLessThanOrEqual(2);
      seen.push(...page.orders.map((o) => o.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(5);
    const rows = await db().order.findMany({ where: { accountId: alice.id } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    const times = seen.map((id) => byId.get(id)?.createdAt.getTime() ?? 0);
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const [newest] = (await listOrdersOfAccount(db(), alice.id, { limit: 1 })).orders;
    expect(newest).toMatchObject({
      id: placed[4],
      status: "pending_payment",
      paymentStatus: null,
      totalMinor: byId.get(placed[4] as string)?.totalMinor,
      currency: "EUR",
      itemCount: 1,
    });
  });

  it("answers through orders.history for the signed-in customer only, and refuses a forged cursor", async () => {
    const caller = createCaller(contextFor(alice));
    const first = await caller.orders.history({ limit: 3 });
    expect(first.orders.map((o) => o.id)).toEqual([placed[4], placed[3], expect.any(String)]);
    expect(first.orders[0]?.createdAt).toBe("2026-03-04T10:00:00.000Z");
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = await caller.orders.history({ limit: 3, cursor: first.nextCursor });
    expect(rest.orders).toHaveLength(2);
    expect(rest.nextCursor).toBeNull();

    const bobs = await createCaller(contextFor(bob)).orders.history({});
    expect(bobs.orders).toHaveLength(1);
    expect(bobs.orders.map((o) => o.id)).not.toContain(placed[0]);

    await expect(caller.orders.history({ cursor: "not-a-cursor" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(createCaller(contextFor(null)).orders.history({})).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});
