import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../_keyed/memory-storage";
import { latestUnfinishedIntent, readIntent, settleIntent, startIntent } from "./intent";

const ORDER = "0b9e8f0e-5a0c-4f43-9a51-3c1f7c0d2e11";
let n = 0;
const factory = (iso = "2026-12-01T10:00:00.000Z") => ({
  newKey: () => `key-${++n}`,
  now: () => new Date(iso),
});

describe("payment intents in storage", () => {
  it("saves a new intent with a new key before handing it back", () => {
    const storage = new MemoryStorage();
    const intent = startIntent(storage, { orderId: ORDER, paymentMethod: "pm_card_visa" }, factory());
    expect(intent).toMatchObject({
      orderId: ORDER,
      paymentMethod: "pm_card_visa",
      createdAt: "2026-12-01T10:00:00.000Z",
    });
    expect(readIntent(storage, ORDER)).toEqual(intent);
    const next = startIntent(storage, { orderId: ORDER, paymentMethod: "pm_card_visa" }, factory());
    expect(next.idempotencyKey).not.toBe(intent.idempotencyKey);
    expect(readIntent(storage, ORDER)).toEqual(next);
  });

  it("makes UUID keys in the browser by default", () => {
    const intent = startIntent(new MemoryStorage(), { orderId: ORDER, paymentMethod: "pm_card_visa" });
    expect(intent.idempotencyKey).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it("reads anything that is not an intent of this order as none", () => {
    const storage = new MemoryStorage();
    expect(readIntent(storage, ORDER)).toBeNull();
    storage.setItem(`checkout:intent:${ORDER}`, "{not json");
    expect(readIntent(storage, ORDER)).toBeNull();
    storage.setItem(`checkout:intent:${ORDER}`, JSON.stringify({ orderId: ORDER, idempotencyKey: "" }));
    expect(readIntent(storage, ORDER)).toBeNull();
    const other = startIntent(storage, { orderId: "other", paymentMethod: "pm_card_visa" }, factory());
    storage.setItem(`checkout:intent:${ORDER}`, JSON.stringify(other));
    expect(readIntent(storage, ORDER)).toBeNull();
  });

  it("settles an intent, but never over a newer intent another tab started for the order", () => {
    const storage = new MemoryStorage();
    const first = startIntent(storage, { orderId: ORDER, paymentMethod: "pm_card_visa" }, factory());
    settleIntent(storage, first, "succeeded");
    expect(readIntent(storage, ORDER)).toEqual({ ...first, settled: "succeeded" });

    const tabA = startIntent(storage, { orderId: ORDER, paymentMethod: "pm_card_slow" }, factory());
    const tabB = startIntent(storage, { orderId: ORDER, paymentMethod: "pm_card_visa" }, factory());
    settleIntent(storage, tabA, "succeeded");
    expect(readIntent(storage, ORDER)).toEqual(tabB);
  });

  it("finds the newest unfinished intent of any order", () => {
    const storage = new MemoryStorage();
    storage.setItem("checkout:cart", "[]");
    const older = startIntent(
      storage,
      { orderId: "o1", paymentMethod: "pm_card_visa" },
      factory("2026-12-01T09:00:00.000Z"),
    );
    const settled = startIntent(
      storage,
      { orderId: "o2", paymentMethod: "pm_card_visa" },
      factory("2026-12-01T11:00:00.000Z"),
    );
    settleIntent(storage, settled, "declined");
    expect(latestUnfinishedIntent(storage)).toEqual(older);
    const newer = startIntent(
      storage,
      { orderId: "o3", paymentMethod: "pm_card_visa" },
      factory("2026-12-01T10:00:00.000Z"),
    );
    expect(latestUnfinishedIntent(storage)).toEqual(newer);
  });

  it("still hands back the intent when storage refuses the write", () => {
    const storage = new MemoryStorage();
    storage.failWrites = true;
    const intent = startIntent(storage, { orderId: ORDER, paymentMethod: "pm_card_visa" }, factory());
    expect(intent.idempotencyKey).toMatch(/^key-/);
    expect(readIntent(storage, ORDER)).toBeNull();
  });
});
