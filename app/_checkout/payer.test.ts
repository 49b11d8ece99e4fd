import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../_keyed/memory-storage";
import type { TPayment } from "./pay";
import { createPayer, type PayState } from "./payer";

const ORDER = "0b9e8f0e-5a0c-4f43-9a51-3c1f7c0d2e11";
const payment = (id = "p_1"): TPayment => ({
  id,
  orderId: ORDER,
  amount: 2599,
  currency: "EUR",
  status: "succeeded",
  providerChargeId: "ch_1",
  captureMethod: "automatic",
  amountCaptured: 2599,
  captureBefore: null,
  nextAction: null,
});
const declined = () =>
  TRPCClientError.from(
    {
      error: {
        message: "Your card was declined.",
        code: -32000,
        data: {
          code: "PAYMENT_REQUIRED",
          httpStatus: 402,
          details: { reason: "card_declined", paymentId: "p_d" },
        },
      },
    },
    { meta: { response: new Response(null, { status: 402 }) } },
  );
const networkError = () => TRPCClientError.from(new TypeError("Failed to fetch"));

/** Lets the page's store writes and the first request happen. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The order's intent as the page stored it. */
const saved = (storage: Storage, orderId = ORDER) =>
  JSON.parse(storage.getItem(`checkout:intent:${orderId}`) ?? "null") as {
    key: string;
    answer?: { status: number; body: unknown };
  } | null;

interface Sent {
  key: string;
  paymentMethod: string;
  /** The key saved in storage at the moment the request left. */
  savedKey: string | undefined;
}

/** A payer whose requests are answered by `answer`, recording each request. */
function harness(
  answer: (sent: Sent, index: number) => Promise<TPayment>,
  storage = new MemoryStorage(),
  keyPrefix = "key",
) {
  const sent: Sent[] = [];
  let n = 0;
  const payer = createPayer({
    storage: () => storage,
    async send(input, key) {
      const request = {
        key,
        paymentMethod: input.paymentMethod,
        savedKey: saved(storage, input.orderId)?.key,
      };
      sent.push(request);
      return answer(request, sent.length - 1);
    },
    sleep: async () => {},
    now: Date.now,
    random: () => 0.5,
    intents: { newKey: () => `${keyPrefix}-${++n}`, now: () => new Date() },
  });
  return { payer, sent, storage };
}

describe("createPayer", () => {
  it("joins the intent in flight when Pay is pressed again: five presses, one key, one request", async () => {
    let release: (p: TPayment) => void = () => {};
    const { payer, sent, storage } = harness(() => new Promise((resolve) => (release = resolve)));
    const presses = Array.from({ length: 5 }, () => payer.pay(ORDER, "pm_card_visa"));
    expect(new Set(presses).size).toBe(1);
    await tick();
    release(payment());
    const outcomes = await Promise.all(presses);
    expect(outcomes.every((o) => o.kind === "succeeded")).toBe(true);
    expect(sent.map((s) => s.key)).toEqual(["key-1"]);
    expect(saved(storage)).toMatchObject({
      key: "key-1",
      answer: { status: 200, body: { kind: "succeeded", payment: payment() } },
    });
  });

  it("saves the intent before its first request leaves, and retries with that same key", async () => {
    const { payer, sent } = harness(async (_s, i) => {
      if (i < 2) throw networkError();
      return payment();
    });
    await payer.pay(ORDER, "pm_card_visa");
    expect(sent).toEqual([
      { key: "key-1", paymentMethod: "pm_card_visa", savedKey: "key-1" },
      { key: "key-1", paymentMethod: "pm_card_visa", savedKey: "key-1" },
      { key: "key-1", paymentMethod: "pm_card_visa", savedKey: "key-1" },
    ]);
  });

  it("resumes an unfinished intent after a reload with its saved key, and only once it is settled", async () => {
    const storage = new MemoryStorage();
    // The first page sends its request and is reloaded before any answer.
    const before = harness(() => new Promise<TPayment>(() => {}), storage);
    void before.payer.pay(ORDER, "pm_card_slow");
    await tick();
    expect(before.sent.map((s) => s.key)).toEqual(["key-1"]);

    const after = harness(async () => payment(), storage);
    const outcome = await after.payer.resume(ORDER);
    expect(outcome?.kind).toBe("succeeded");
    expect(after.sent).toEqual([{ key: "key-1", paymentMethod: "pm_card_slow", savedKey: "key-1" }]);
    expect(await after.payer.resume(ORDER)).toBeNull();
  });

  it("makes UUID keys in the browser by default", async () => {
    const keys: string[] = [];
    const payer = createPayer({
      storage: () => new MemoryStorage(),
      async send(_input, key) {
        keys.push(key);
        return payment();
      },
    });
    await payer.pay(ORDER, "pm_card_visa");
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("has nothing to resume when no intent was saved", async () => {
    const { payer, sent } = harness(async () => payment());
    expect(await payer.resume(ORDER)).toBeNull();
    expect(sent).toEqual([]);
  });

  it("makes a new key only for a new intent: another card after a decline", async () => {
    const { payer, sent, storage } = harness(async (s) => {
      if (s.paymentMethod === "pm_card_declined") throw declined();
      return payment("p_2");
    });
    expect(await payer.pay(ORDER, "pm_card_declined")).toMatchObject({ kind: "declined", paymentId: "p_d" });
    expect(saved(storage)).toMatchObject({
      key: "key-1",
      answer: { status: 402, body: { kind: "declined" } },
    });
    expect(await payer.resume(ORDER)).toBeNull();
    expect(await payer.pay(ORDER, "pm_card_visa")).toMatchObject({ kind: "succeeded" });
    expect(sent.map((s) => [s.paymentMethod, s.key])).toEqual([
      ["pm_card_declined", "key-1"],
      ["pm_card_visa", "key-2"],
    ]);
  });

  it("keeps an unconfirmed intent unfinished, so checking again uses the same key", async () => {
    let online = false;
    const storage = new MemoryStorage();
    const sent: string[] = [];
    let clock = 0;
    const payer = createPayer({
      storage: () => storage,
      async send(_input, key) {
        sent.push(key);
        if (!online) throw networkError();
        return payment();
      },
      sleep: async (ms) => {
        clock += ms;
      },
      now: () => clock,
      random: () => 0.5,
      policy: { deadlineMs: 5_000 },
      intents: { newKey: () => "key-1", now: () => new Date() },
    });
    expect((await payer.pay(ORDER, "pm_card_visa")).kind).toBe("unconfirmed");
    expect(saved(storage)?.answer).toBeUndefined();
    online = true;
    expect((await payer.resume(ORDER))?.kind).toBe("succeeded");
    expect(new Set(sent)).toEqual(new Set(["key-1"]));
  });

  it("publishes idle, then paying, then the outcome", async () => {
    const { payer } = harness(async () => payment());
    const seen: PayState["phase"][] = [payer.getState(ORDER).phase];
    payer.subscribe(() => seen.push(payer.getState(ORDER).phase));
    await payer.pay(ORDER, "pm_card_visa");
    expect(seen[0]).toBe("idle");
    expect(seen).toContain("running");
    expect(seen.at(-1)).toBe("done");
    expect(payer.getState(ORDER)).toMatchObject({ phase: "done", outcome: { kind: "succeeded" } });
  });

  it("lets a second tab start its own intent; the first tab's outcome does not settle it", async () => {
    const storage = new MemoryStorage();
    let releaseA: (p: TPayment) => void = () => {};
    const tabA = harness(() => new Promise((resolve) => (releaseA = resolve)), storage, "a");
    const tabB = harness(() => new Promise<TPayment>(() => {}), storage, "b");
    const paidA = tabA.payer.pay(ORDER, "pm_card_slow");
    void tabB.payer.pay(ORDER, "pm_card_visa");
    await tick();
    releaseA(payment());
    await paidA;
    expect(tabA.sent.map((s) => s.key)).toEqual(["a-1"]);
    expect(tabB.sent.map((s) => s.key)).toEqual(["b-1"]);
    expect(saved(storage)).toMatchObject({ key: "b-1" });
    expect(saved(storage)?.answer).toBeUndefined();
  });

  it("pays on when storage refuses the write: the intent lives on in the page, with its key", async () => {
    const storage = new MemoryStorage();
    storage.failWrites = true;
    const { payer, sent } = harness(async (_s, i) => {
      if (i === 0) throw networkError();
      return payment();
    }, storage);
    expect((await payer.pay(ORDER, "pm_card_visa")).kind).toBe("succeeded");
    expect(sent.map((s) => [s.key, s.savedKey])).toEqual([
      ["key-1", undefined],
      ["key-1", undefined],
    ]);
  });
});
