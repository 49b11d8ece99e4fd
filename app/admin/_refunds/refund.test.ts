import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../../_keyed/memory-storage";
import { httpError, networkError } from "../../_keyed/testing/trpc-errors";
import { createRefunder, type TRefund, unfinishedRequest } from "./refund";

const PAYMENT = "5c2d7e1a-0000-4000-8000-000000000001";
const INPUT = { paymentId: PAYMENT, amountMinor: 500, reason: "damaged" };
const refund = (id = "r_1"): TRefund => ({
  id,
  paymentId: PAYMENT,
  amountMinor: 500,
  currency: "EUR",
  reason: "damaged",
  status: "succeeded",
  providerRefundId: "re_1",
  createdAt: "2026-12-01T10:00:00.000Z",
});

/** Lets the page's store writes and the first request happen. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The payment's refund intent as the page stored it. */
const saved = (storage: Storage) =>
  JSON.parse(storage.getItem(`admin:refund-intent:${PAYMENT}`) ?? "null") as {
    key: string;
    answer?: { status: number; body: unknown };
  } | null;

function harness(answer: (key: string, index: number) => Promise<TRefund>, storage = new MemoryStorage()) {
  const keys: string[] = [];
  const savedKeys: (string | undefined)[] = [];
  const sleeps: number[] = [];
  let n = 0;
  const refunder = createRefunder({
    storage: () => storage,
    async send(input, key) {
      keys.push(key);
      savedKeys.push(input.paymentId === PAYMENT ? saved(storage)?.key : undefined);
      return answer(key, keys.length - 1);
    },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: Date.now,
    random: () => 0.5,
    intents: { newKey: () => `key-${++n}`, now: () => new Date() },
  });
  return { refunder, keys, savedKeys, sleeps, storage };
}

describe("createRefunder", () => {
  it("a double click joins the refund in flight: one key, one request; the key was saved before it left", async () => {
    let release: (r: TRefund) => void = () => {};
    const { refunder, keys, savedKeys, storage } = harness(
      () => new Promise((resolve) => (release = resolve)),
    );
    const presses = [refunder.confirm(INPUT), refunder.confirm(INPUT)];
    await tick();
    release(refund());
    expect(await presses[0]).toMatchObject({ kind: "succeeded", refund: { id: "r_1" } });
    // The second press joined the first: the very same outcome, not a second run's.
    expect(await presses[1]).toBe(await presses[0]);
    expect(keys).toEqual(["key-1"]);
    expect(savedKeys).toEqual(["key-1"]);
    expect(saved(storage)).toMatchObject({
      key: "key-1",
      answer: { status: 200, body: { kind: "succeeded" } },
    });
  });

  it("a lost answer and a 409 in flight are retried with the same key, the 409 after its Retry-After", async () => {
    const steps = [networkError(), httpError(409, "X", { retryAfter: "2" }), refund()];
    const { refunder, keys, sleeps } = harness(async () => {
      const step = steps.shift();
      if (step instanceof Error) throw step;
      return step as TRefund;
    });
    expect(await refunder.confirm(INPUT)).toMatchObject({ kind: "succeeded" });
    expect(keys).toEqual(["key-1", "key-1", "key-1"]);
    expect(sleeps[1]).toBe(2000);
  });

  it("a reload resumes the saved unfinished refund with its key; a finished one is not resumed", async () => {
    const storage = new MemoryStorage();
    const before = harness(() => new Promise<TRefund>(() => {}), storage);
    void before.refunder.confirm(INPUT);
    await tick();
    const after = harness(async () => refund(), storage);
    expect(await after.refunder.resume(PAYMENT)).toMatchObject({ kind: "succeeded" });
    expect(after.keys).toEqual(["key-1"]);
    expect(await after.refunder.resume(PAYMENT)).toBeNull();
  });

  it("an over-refund is refused with what is left to refund, and the intent is settled (never retried)", async () => {
    const { refunder, keys, storage } = harness(async () => {
      throw httpError(422, "X", {
        message: "The refund exceeds what is left to refund.",
        details: { reason: "refund_exceeds_captured", refundableMinor: 120 },
      });
    });
    expect(await refunder.confirm(INPUT)).toEqual({
      kind: "refused",
      reason: "refund_exceeds_captured",
      message: "The refund exceeds what is left to refund.",
      refundableMinor: 120,
    });
    expect(keys).toHaveLength(1);
    expect(saved(storage)?.answer).toMatchObject({ status: 422, body: { kind: "refused" } });
    // The next press is a new intent with a new key.
    await refunder.confirm({ ...INPUT, amountMinor: 120 });
    expect(keys).toEqual(["key-1", "key-2"]);
  });

  it("beyond what is left while another refund is pending (422 + Retry-After) waits, then takes the final answer", async () => {
    const steps = [
      httpError(422, "X", {
        retryAfter: "1",
        details: { reason: "refund_exceeds_captured", refundableMinor: 0 },
      }),
      httpError(422, "X", { details: { reason: "refund_exceeds_captured", refundableMinor: 200 } }),
    ];
    const { refunder, keys, sleeps } = harness(async () => {
      throw steps.shift();
    });
    expect(await refunder.confirm(INPUT)).toMatchObject({ kind: "refused", refundableMinor: 200 });
    expect(keys).toEqual(["key-1", "key-1"]);
    expect(sleeps).toEqual([1000]);
  });

  it("a key used for another request (422 without a reason) is rejected with a message saying so", async () => {
    const { refunder } = harness(async () => {
      throw httpError(422, "X", {
        message: "This Idempotency-Key was already used with a different request.",
      });
    });
    expect(await refunder.confirm(INPUT)).toMatchObject({ kind: "rejected", httpStatus: 422 });
  });

  it("a signed-out operator keeps the intent unfinished, to resume with the same key", async () => {
    const { refunder, storage } = harness(async () => {
      throw httpError(401, "X");
    });
    expect(await refunder.confirm(INPUT)).toMatchObject({ kind: "signed_out" });
    expect(saved(storage)?.answer).toBeUndefined();
  });

  it("a Confirm in another tab makes its own intent: the first tab's refund in flight is not taken over", async () => {
    const storage = new MemoryStorage();
    const first = harness(() => new Promise<TRefund>(() => {}), storage);
    void first.refunder.confirm(INPUT);
    await tick();
    const sent: number[] = [];
    const second = createRefunder({
      storage: () => storage,
      async send(input) {
        sent.push(input.amountMinor);
        return refund("r_2");
      },
      sleep: async () => {},
      now: Date.now,
      random: () => 0.5,
      intents: { newKey: () => "other-tab-key", now: () => new Date() },
    });
    expect(await second.confirm({ ...INPUT, amountMinor: 100 })).toMatchObject({ kind: "succeeded" });
    expect(sent).toEqual([100]);
  });

  it("a Confirm after an unfinished refund goes on with its key and request, not a new intent", async () => {
    const steps: (Error | TRefund)[] = [httpError(401, "X"), refund()];
    const { refunder, keys } = harness(async () => {
      const step = steps.shift();
      if (step instanceof Error) throw step;
      return step as TRefund;
    });
    expect(await refunder.confirm(INPUT)).toMatchObject({ kind: "signed_out" });
    expect(unfinishedRequest(refunder.getState(PAYMENT))).toEqual(INPUT);
    // Signed in again, the operator confirms (another amount typed): the saved refund is what goes on.
    const again = await refunder.confirm({ ...INPUT, amountMinor: 100 });
    expect(again).toMatchObject({ kind: "succeeded", refund: { amountMinor: 500 } });
    expect(keys).toEqual(["key-1", "key-1"]);
    expect(unfinishedRequest(refunder.getState(PAYMENT))).toBeNull();
    // Finished, the next Confirm is a new intent.
    steps.push(refund("r_2"));
    await refunder.confirm({ ...INPUT, amountMinor: 100 });
    expect(keys).toEqual(["key-1", "key-1", "key-2"]);
  });
});
