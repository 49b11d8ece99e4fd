import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../_keyed/memory-storage";
import { latestUnfinishedIntent, paymentIntents, type TPaymentIntent } from "./intent";

const ORDER = "0b9e8f0e-5a0c-4f43-9a51-3c1f7c0d2e11";
const intent = (orderId: string, key: string, createdAt = "2026-12-01T10:00:00.000Z"): TPaymentIntent => ({
  intentId: orderId,
  key,
  request: { orderId, paymentMethod: "pm_card_visa" },
  createdAt,
});
const answer = { status: 200, body: { kind: "succeeded" }, answeredAt: "2026-12-01T10:00:01.000Z" };

describe("payment intents in the browser's storage", () => {
  it("stores an intent under its order and reads it back", async () => {
    const storage = new MemoryStorage();
    const store = paymentIntents(() => storage);
    await store.create(intent(ORDER, "key-1"));
    expect(JSON.parse(storage.getItem(`checkout:intent:${ORDER}`) ?? "null")).toMatchObject({ key: "key-1" });
    expect(await store.list()).toEqual([intent(ORDER, "key-1")]);
  });

  it("reads anything that is not an intent of its order as none", async () => {
    const storage = new MemoryStorage();
    const store = paymentIntents(() => storage);
    storage.setItem(`checkout:intent:${ORDER}`, "{not json");
    storage.setItem("checkout:intent:o2", JSON.stringify({ orderId: "o2", idempotencyKey: "" }));
    // Another order's intent under this order's name.
    storage.setItem("checkout:intent:o3", JSON.stringify(intent("o4", "key-4")));
    storage.setItem("checkout:cart", "[]");
    expect(await store.list()).toEqual([]);
  });

  it("goes on with an intent an earlier version stored: unfinished with its key, settled as answered", async () => {
    const storage = new MemoryStorage();
    const old = { orderId: ORDER, paymentMethod: "pm_card_slow", idempotencyKey: "old-key" };
    storage.setItem(
      `checkout:intent:${ORDER}`,
      JSON.stringify({ ...old, createdAt: "2026-12-01T09:00:00.000Z" }),
    );
    storage.setItem(
      "checkout:intent:o2",
      JSON.stringify({ ...old, orderId: "o2", createdAt: "2026-12-01T09:30:00.000Z", settled: "declined" }),
    );
    expect(await latestUnfinishedIntent(() => storage)).toEqual({
      intentId: ORDER,
      key: "old-key",
      request: { orderId: ORDER, paymentMethod: "pm_card_slow" },
      createdAt: "2026-12-01T09:00:00.000Z",
      answer: undefined,
    });
  });

  it("keeps an answer with its intent, but never over a newer intent another tab started for the order", async () => {
    const storage = new MemoryStorage();
    const store = paymentIntents(() => storage);
    const tabA = intent(ORDER, "a");
    await store.create(tabA);
    await store.settle?.(tabA, answer);
    expect(await store.list()).toEqual([{ ...tabA, answer }]);
    // Tab B replaces the order's intent; tab A's late answer leaves it alone.
    await store.delete(ORDER);
    const tabB = intent(ORDER, "b");
    await store.create(tabB);
    await store.settle?.(tabA, answer);
    expect(await store.list()).toEqual([tabB]);
  });

  it("finds the newest unfinished intent of any order", async () => {
    const storage = new MemoryStorage();
    const store = paymentIntents(() => storage);
    const older = intent("o1", "k1", "2026-12-01T09:00:00.000Z");
    const answered = intent("o2", "k2", "2026-12-01T11:00:00.000Z");
    await store.create(older);
    await store.create(answered);
    await store.settle?.(answered, answer);
    expect(await latestUnfinishedIntent(() => storage)).toEqual(older);
    const newer = intent("o3", "k3", "2026-12-01T10:00:00.000Z");
    await store.create(newer);
    expect(await latestUnfinishedIntent(() => storage)).toEqual(newer);
  });
});
