import { describe, expect, it } from "vitest";
import { createClient } from "./client.js";
import { memoryStore } from "./index.js";
import type { IntentStore, StoredIntent } from "./intents.js";

const ORDER = "0193a1c2-7f00-7000-8000-000000000001";
const payment = {
  id: "p1",
  orderId: ORDER,
  amount: 2500,
  currency: "EUR",
  status: "succeeded",
  providerChargeId: "ch_1",
};

/**
 * The client's own bookkeeping, seen from the fetch it is given (the HTTP behaviour against the
 * real server is in e2e/client.spec.ts): what is stored when an attempt leaves, which key it carries.
 */
/** A client whose every attempt goes to `answer`, counted. */
function clientAnswering(
  answer: (request: Request) => Promise<Response>,
  store: IntentStore = memoryStore(),
) {
  const sent: Request[] = [];
  const client = createClient({
    baseUrl: "http://checkout.invalid",
    apiKey: "sk_test_x",
    store,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    fetch: async (input) => {
      sent.push(input as Request);
      return answer(input as Request);
    },
  });
  return { client, store, sent };
}

describe("createClient", () => {
  it("stores the intent with its key before the first attempt, and sends that key on every retry", async () => {
    const store = memoryStore();
    const seen: { key: string | null; stored: StoredIntent[] }[] = [];
    const { client } = clientAnswering(async (request) => {
      seen.push({ key: request.headers.get("idempotency-key"), stored: await store.list() });
      if (seen.length < 3) throw new TypeError("fetch failed");
      return Response.json(payment, { headers: { "idempotent-replayed": "true" } });
    }, store);
    const result = await client.payments.create(
      { orderId: ORDER, paymentMethod: "pm_card_visa" },
      { intentId: "i1" },
    );
    expect(result).toEqual({ ...payment, intentId: "i1", replayed: true });
    expect(seen).toHaveLength(3);
    const key = seen[0]?.key;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    for (const attempt of seen) {
      expect(attempt.key).toBe(key);
      expect(attempt.stored).toMatchObject([{ intentId: "i1", key, request: { body: { orderId: ORDER } } }]);
    }
    // Kept with its answer until the caller forgets it.
    expect(await store.list()).toMatchObject([
      { intentId: "i1", key, answer: { status: 200, body: payment } },
    ]);
    await client.forget("i1");
    expect(await store.list()).toEqual([]);
  });

  it("answers the same intent id with its payment after the caller lost the first answer", async () => {
    // The API as it behaves: a key's first answer is replayed to that key; another key for the
    // paid order is a final 409 order-already-paid.
    const paidBy = new Map<string, string>();
    const api = async (request: Request) => {
      const key = request.headers.get("idempotency-key") ?? "";
      const { orderId } = (await request.json()) as { orderId: string };
      if (!paidBy.has(orderId)) {
        paidBy.set(orderId, key);
        return Response.json(payment);
      }
      if (paidBy.get(orderId) === key)
        return Response.json(payment, { headers: { "idempotent-replayed": "true" } });
      return Response.json(
        { type: "/docs/problems#order-already-paid", title: "Order already paid", status: 409 },
        { status: 409, headers: { "content-type": "application/problem+json" } },
      );
    };
    const store = memoryStore();
    // The caller crashes after the client has the answer and before the caller records it.
    await clientAnswering(api, store).client.payments.create(
      { orderId: ORDER, paymentMethod: "pm_card_visa" },
      { intentId: "i1" },
    );
    const restarted = clientAnswering(api, store).client;
    const again = await restarted.payments.create(
      { orderId: ORDER, paymentMethod: "pm_card_visa" },
      { intentId: "i1" },
    );
    expect(again).toEqual({ ...payment, intentId: "i1", replayed: true });
    expect(await restarted.resume()).toEqual([
      { intentId: "i1", ok: true, payment: expect.objectContaining({ ...payment, intentId: "i1" }) },
    ]);
  });

  it("keeps a final refusal with its intent too: the same intent id gets the same error, without a request", async () => {
    const { client, sent } = clientAnswering(async () =>
      Response.json(
        { type: "/docs/problems#card-declined", title: "Card declined", status: 402, paymentId: "p9" },
        { status: 402, headers: { "content-type": "application/problem+json" } },
      ),
    );
    const request = { orderId: ORDER, paymentMethod: "pm_card_declined" as const };
    const first = await client.payments.create(request, { intentId: "i1" }).catch((e: unknown) => e);
    const again = await client.payments.create(request, { intentId: "i1" }).catch((e: unknown) => e);
    expect(first).toMatchObject({
      code: "card-declined",
      status: 402,
      final: true,
      problem: { paymentId: "p9" },
    });
    expect(again).toMatchObject({
      code: "card-declined",
      status: 402,
      final: true,
      problem: { paymentId: "p9" },
    });
    expect(sent).toHaveLength(1);
  });

  it("resume() drops answered intents older than keepAnswersMs, and reports the others", async () => {
    const store = memoryStore();
    const intent = (intentId: string, answeredAt: string) => ({
      intentId,
      key: `k-${intentId}`,
      request: {
        operation: "payments.create" as const,
        body: { orderId: ORDER, paymentMethod: "pm_card_visa" as const },
      },
      createdAt: answeredAt,
      answer: { status: 200, body: payment, answeredAt },
    });
    await store.create(intent("old", new Date(Date.now() - 2 * 86_400_000).toISOString()));
    await store.create(intent("new", new Date().toISOString()));
    const { client, sent } = clientAnswering(async () => Response.json(payment), store);
    expect((await client.resume()).map((o) => [o.intentId, o.ok])).toEqual([["new", true]]);
    expect((await store.list()).map((i) => i.intentId)).toEqual(["new"]);
    expect(sent).toHaveLength(0);
  });

  it("refuses an intent id stored for another request, without sending anything", async () => {
    const { client, store, sent } = clientAnswering(async () => {
      throw new TypeError("fetch failed");
    });
    await store.create({
      intentId: "i1",
      key: "k1",
      request: { operation: "payments.create", body: { orderId: ORDER, paymentMethod: "pm_card_visa" } },
      createdAt: new Date().toISOString(),
    });
    const error = await client.payments
      .create({ orderId: ORDER, paymentMethod: "pm_card_declined" }, { intentId: "i1" })
      .catch((e: unknown) => e);
    expect(client.isError(error)).toBe(true);
    expect(error).toMatchObject({ code: "intent-conflict", intentId: "i1", final: false });
    expect(sent).toHaveLength(0);
    expect(await store.list()).toHaveLength(1);
  });

  it("settles an intent once when create() and resume() race for it in one process", async () => {
    const { client, sent } = clientAnswering(async () => {
      await new Promise((r) => setTimeout(r, 50));
      return Response.json(payment);
    });
    const [created, resumed] = await Promise.all([
      client.payments.create({ orderId: ORDER, paymentMethod: "pm_card_visa" }, { intentId: "i1" }),
      new Promise((r) => setTimeout(r, 10)).then(() => client.resume()),
    ]);
    expect(sent).toHaveLength(1);
    expect(resumed).toEqual([{ intentId: "i1", ok: true, payment: created }]);
  });

  it("recognises its errors by brand, also from another copy of the package", () => {
    const client = createClient({
      baseUrl: "http://checkout.invalid",
      apiKey: "sk_test_x",
      store: memoryStore(),
    });
    const foreign = Object.assign(new Error("x"), {
      [Symbol.for("@idempotent-checkout/client.error")]: true,
    });
    expect(client.isError(foreign)).toBe(true);
    expect(client.isError(new Error("x"))).toBe(false);
    expect(client.isError(null)).toBe(false);
  });
});
