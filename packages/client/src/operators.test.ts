import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "./client.js";
import { memoryStore } from "./index.js";
import type { IntentStore, StoredIntent } from "./intents.js";
import { type AppStack, startAppStack } from "./testing/app-stack.js";

/**
 * The operators' calls (capture, cancel) against the real API server, provider and PostgreSQL:
 * keyed like payments.create, the intent stored before the first attempt, its key on every retry,
 * the final answer kept with it.
 */
let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** An order of one tee (2500 EUR cents) authorized by alice with a manual capture. */
async function authorized(): Promise<string> {
  const shopper = createClient({ baseUrl: stack.url, apiKey: "sk_test_alice", store: memoryStore() });
  const order = await shopper.orders.create({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] });
  const payment = await shopper.payments.create({
    orderId: order.id,
    paymentMethod: "pm_card_visa",
    captureMethod: "manual",
  });
  expect(payment.status).toBe("authorized");
  return payment.id;
}

interface Sent {
  key: string | null;
  status: number | undefined;
  retryAfter: string | null;
  stored: StoredIntent[];
}

/**
 * An operator's client; every attempt is recorded with its key, its answer and what the store held
 * when it left. `loseAnswers` attempts reach the server, and their answers are lost on the way back.
 */
function operator(
  opts: { store?: IntentStore; loseAnswers?: number; headers?: Record<string, string> } = {},
) {
  const store = opts.store ?? memoryStore();
  const sent: Sent[] = [];
  let lose = opts.loseAnswers ?? 0;
  const client = createClient({
    baseUrl: stack.url,
    apiKey: stack.adminToken,
    store,
    retry: { baseDelayMs: 10, maxDelayMs: 200 },
    fetch: async (input) => {
      const request = input as Request;
      for (const [name, value] of Object.entries(opts.headers ?? {})) request.headers.set(name, value);
      const attempt: Sent = {
        key: request.headers.get("idempotency-key"),
        status: undefined,
        retryAfter: null,
        stored: await store.list(),
      };
      sent.push(attempt);
      const response = await fetch(request);
      attempt.status = response.status;
      attempt.retryAfter = response.headers.get("retry-after");
      if (lose-- > 0) throw new TypeError("fetch failed");
      return response;
    },
  });
  return { client, store, sent };
}

describe("operators: capture and cancel through the SDK", () => {
  it("captures part once: the key stored before the first attempt, the lost answer replayed to it, kept with the intent", async () => {
    const paymentId = await authorized();
    const { client, store, sent } = operator({ loseAnswers: 1 });
    const captured = await client.payments.capture({ paymentId, amountMinor: 1500 }, { intentId: "cap-1" });
    expect(captured).toMatchObject({
      id: paymentId,
      status: "succeeded",
      amountCaptured: 1500,
      intentId: "cap-1",
      replayed: true,
    });
    expect(sent.map((a) => a.status)).toEqual([200, 200]);
    const key = sent[0]?.key;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    for (const attempt of sent) {
      expect(attempt.key).toBe(key);
      expect(attempt.stored).toMatchObject([
        { intentId: "cap-1", key, request: { operation: "payments.capture", body: { paymentId } } },
      ]);
    }
    expect(await store.list()).toMatchObject([{ intentId: "cap-1", answer: { status: 200 } }]);

    // The same intent again: its kept answer, nothing sent.
    const again = await client.payments.capture({ paymentId, amountMinor: 1500 }, { intentId: "cap-1" });
    expect(again).toEqual({ ...captured, replayed: true });
    expect(sent).toHaveLength(2);
    // Another request under that intent id is refused before anything is sent.
    const conflict = await client.payments.cancel({ paymentId }, { intentId: "cap-1" }).catch((e) => e);
    expect(conflict).toMatchObject({ code: "intent-conflict", final: false });
    expect(sent).toHaveLength(2);
  });

  it("cancels; a capture after it is a final 409 payment-not-capturable, kept with its intent", async () => {
    const paymentId = await authorized();
    const { client, sent } = operator();
    const canceled = await client.payments.cancel({ paymentId });
    expect(canceled).toMatchObject({ id: paymentId, status: "canceled", amountCaptured: 0, replayed: false });

    const late = await client.payments.capture({ paymentId }, { intentId: "late" }).catch((e) => e);
    expect(client.isError(late)).toBe(true);
    expect(late).toMatchObject({
      code: "payment-not-capturable",
      status: 409,
      final: true,
      intentId: "late",
      problem: { state: "canceled" },
    });
    const attempts = sent.length;
    const again = await client.payments.capture({ paymentId }, { intentId: "late" }).catch((e) => e);
    expect(again).toMatchObject({ code: "payment-not-capturable", final: true });
    expect(sent).toHaveLength(attempts);
  });

  it("retries a 409 payment-not-capturable with Retry-After (another capture in flight) with the same key until it is final", async () => {
    const paymentId = await authorized();
    // A capture whose provider call takes three seconds: the cancel meets it in flight.
    const slow = operator({ headers: { "x-provider-fault": "latency=3000" } });
    const capturing = slow.client.payments.capture({ paymentId });
    await expect.poll(() => slow.sent.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const { client, store, sent } = operator();
    const lost = await client.payments.cancel({ paymentId }, { intentId: "void" }).catch((e) => e);
    expect(await capturing).toMatchObject({ status: "succeeded", amountCaptured: 2500 });
    expect(lost).toMatchObject({
      code: "payment-not-capturable",
      status: 409,
      final: true,
      problem: { state: "captured" },
    });
    // In flight: 409 with Retry-After, asked again with the same key; then the stored, final 409.
    expect(sent[0]).toMatchObject({ status: 409, retryAfter: expect.stringMatching(/^\d+$/) });
    expect(sent.at(-1)).toMatchObject({ status: 409, retryAfter: null });
    expect(new Set(sent.map((a) => a.key)).size).toBe(1);
    expect(await store.list()).toMatchObject([{ intentId: "void", answer: { status: 409 } }]);
  }, 30_000);
});
