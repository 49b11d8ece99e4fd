import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { httpError, networkError } from "../_keyed/testing/trpc-errors";
import { type PayDeps, type PaymentProgress, payWithRetries, type TPayment } from "./pay";

const KEY = "6f1c2a9e-3d7b-4c55-9a0e-2b8f4d1e7c30";
const INPUT = { orderId: "0b9e8f0e-5a0c-4f43-9a51-3c1f7c0d2e11", paymentMethod: "pm_card_visa" };
const PAYMENT: TPayment = {
  id: "5c2d7e1a-0000-4000-8000-000000000001",
  orderId: INPUT.orderId,
  amount: 2599,
  currency: "EUR",
  status: "succeeded",
  providerChargeId: "ch_1",
  captureMethod: "automatic",
  amountCaptured: 2599,
  captureBefore: null,
  nextAction: null,
};

type Step = TPayment | Error;

/** Deps whose clock moves only when the loop sleeps; `send` answers with the scripted steps. */
function scripted(steps: Step[], overrides: Partial<PayDeps> = {}) {
  let clock = 1_000_000;
  const keys: string[] = [];
  const sleeps: number[] = [];
  const progress: PaymentProgress[] = [];
  const deps: PayDeps = {
    async send(_input, key) {
      keys.push(key);
      const step = steps.shift();
      if (!step) throw new Error("no more scripted answers");
      if (step instanceof Error) throw step;
      return step;
    },
    async sleep(ms) {
      sleeps.push(ms);
      clock += ms;
    },
    now: () => clock,
    random: () => 0.5,
    onProgress: (p) => progress.push(p),
    ...overrides,
  };
  return { deps, keys, sleeps, progress };
}

describe("payWithRetries", () => {
  it("answers the first success without retrying", async () => {
    const { deps, keys, sleeps } = scripted([PAYMENT]);
    expect(await payWithRetries(deps, INPUT, KEY)).toEqual({ kind: "succeeded", payment: PAYMENT });
    expect(keys).toEqual([KEY]);
    expect(sleeps).toEqual([]);
  });

  it("retries network failures, 5xx and 429 with the same key and a growing backoff", async () => {
    const { deps, keys, sleeps } = scripted([
      networkError(),
      httpError(503, "SERVICE_UNAVAILABLE"),
      httpError(500, "INTERNAL_SERVER_ERROR"),
      httpError(429, "TOO_MANY_REQUESTS"),
      PAYMENT,
    ]);
    expect(await payWithRetries(deps, INPUT, KEY)).toEqual({ kind: "succeeded", payment: PAYMENT });
    expect(keys).toEqual([KEY, KEY, KEY, KEY, KEY]);
    // Full jitter, random 0.5: half of 250, 500, 1000, 2000 ms (the client package's policy).
    expect(sleeps).toEqual([125, 250, 500, 1000]);
  });

  it("waits exactly what Retry-After says while the same key is in flight, then takes the replay", async () => {
    const inFlight = () => httpError(409, "CONFLICT", { retryAfter: "2" });
    const { deps, keys, sleeps, progress } = scripted([inFlight(), inFlight(), PAYMENT]);
    expect(await payWithRetries(deps, INPUT, KEY)).toEqual({ kind: "succeeded", payment: PAYMENT });
    expect(keys).toEqual([KEY, KEY, KEY]);
    expect(sleeps).toEqual([2000, 2000]);
    expect(progress).toContainEqual({ attempt: 1, retry: { reason: "in_flight", waitMs: 2000 } });
  });

  it("honours a Retry-After on a 5xx instead of its own backoff", async () => {
    const { deps, keys, sleeps } = scripted([
      httpError(503, "SERVICE_UNAVAILABLE", { retryAfter: "3" }),
      PAYMENT,
    ]);
    expect((await payWithRetries(deps, INPUT, KEY)).kind).toBe("succeeded");
    expect(keys).toEqual([KEY, KEY]);
    expect(sleeps).toEqual([3000]);
  });

  it("stops with 'already paid' on a 409 without Retry-After naming another payment", async () => {
    const { deps, keys } = scripted([
      httpError(409, "CONFLICT", {
        details: { reason: "order_already_paid", paymentId: "p_other", paymentStatus: "succeeded" },
      }),
    ]);
    expect(await payWithRetries(deps, INPUT, KEY)).toEqual({
      kind: "already_paid",
      paymentId: "p_other",
      paymentStatus: "succeeded",
    });
    expect(keys).toHaveLength(1);
  });

  it("stops on a decline with the server's message and the payment id", async () => {
    const { deps, keys } = scripted([
      httpError(402, "PAYMENT_REQUIRED", {
        message: "Your card was declined.",
        details: { reason: "card_declined", paymentId: "p_1", declineCode: "card_declined" },
      }),
    ]);
    expect(await payWithRetries(deps, INPUT, KEY)).toEqual({
      kind: "declined",
      paymentId: "p_1",
      message: "Your card was declined.",
    });
    expect(keys).toHaveLength(1);
  });

  it("says nothing was charged only for a 402 whose reason proves it", async () => {
    const { deps } = scripted([
      httpError(402, "PAYMENT_REQUIRED", {
        message: "Payment required.",
        details: { reason: "something_else" },
      }),
    ]);
    expect(await payWithRetries(deps, INPUT, KEY)).toMatchObject({ kind: "rejected", httpStatus: 402 });
  });

  it.each([
    [422, "UNPROCESSABLE_CONTENT", "rejected"],
    [400, "BAD_REQUEST", "rejected"],
    [404, "NOT_FOUND", "rejected"],
    [409, "CONFLICT", "rejected"],
    [402, "PAYMENT_REQUIRED", "rejected"],
    [401, "UNAUTHORIZED", "signed_out"],
  ])("stops on any other 4xx (%i) without retrying", async (status, code, kind) => {
    const { deps, keys, sleeps } = scripted([httpError(status, code)]);
    const outcome = await payWithRetries(deps, INPUT, KEY);
    expect(outcome.kind).toBe(kind);
    expect(keys).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("explains a key reused with a different request in words a shopper understands", async () => {
    const { deps } = scripted([httpError(422, "UNPROCESSABLE_CONTENT")]);
    const outcome = await payWithRetries(deps, INPUT, KEY);
    expect(outcome).toMatchObject({ kind: "rejected", httpStatus: 422 });
    expect(outcome.kind === "rejected" && outcome.message).toMatch(/not processed.*Press Pay/);
  });

  it("gives up as 'unconfirmed' once the next wait would pass the budget, never sending after it", async () => {
    const failures = Array.from({ length: 50 }, networkError);
    const { deps, keys, sleeps } = scripted(failures, { policy: { deadlineMs: 10_000 } });
    const outcome = await payWithRetries(deps, INPUT, KEY);
    expect(outcome.kind).toBe("unconfirmed");
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
    expect(new Set(keys)).toEqual(new Set([KEY]));
  });

  it("aborts an attempt that outlives attemptTimeoutMs and retries it with the same key", async () => {
    const keys: string[] = [];
    const outcome = await payWithRetries(
      {
        send(_input, key, signal) {
          keys.push(key);
          if (keys.length > 1) return Promise.resolve(PAYMENT);
          return new Promise((_resolve, reject) =>
            signal.addEventListener("abort", () => reject(TRPCClientError.from(signal.reason))),
          );
        },
        sleep: async () => {},
        now: Date.now,
        random: () => 0,
        policy: { attemptTimeoutMs: 20 },
      },
      INPUT,
      KEY,
    );
    expect(outcome.kind).toBe("succeeded");
    expect(keys).toEqual([KEY, KEY]);
  });

  it("reports each attempt, and why it waits before the next", async () => {
    const { deps, progress } = scripted([networkError(), PAYMENT]);
    await payWithRetries(deps, INPUT, KEY);
    expect(progress).toEqual([
      { attempt: 1 },
      { attempt: 1, retry: { reason: "network", waitMs: 125 } },
      { attempt: 2 },
    ]);
  });
});

describe("an answer without a readable status", () => {
  it("is no answer (a fetch failure, an unreadable body): retried with the same key", async () => {
    const { deps, keys } = scripted([networkError(), new Error("boom"), PAYMENT]);
    expect((await payWithRetries(deps, INPUT, KEY)).kind).toBe("succeeded");
    expect(keys).toEqual([KEY, KEY, KEY]);
  });
});
