import { setTimeout as sleep } from "node:timers/promises";
import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, raw, sdk, TEST_AUTH, uniqueKey, visa } from "./test-support";

let provider: ProviderProcess;
let stripe: Stripe;
const db = openDb();

beforeAll(async () => {
  provider = await startProvider({ databaseUrl: databaseUrl(), env: { PROVIDER_SLOW_CARD_MS: "1500" } });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await db.close();
});

describe("Idempotency-Key", () => {
  it("the same key and parameters twice: one PaymentIntent, the second answer replayed with Idempotent-Replayed", async () => {
    const key = uniqueKey("twice");
    const tag = uniqueKey("tag");
    const first = await stripe.paymentIntents.create({ ...visa, metadata: { tag } }, { idempotencyKey: key });
    const second = await stripe.paymentIntents.create(
      { ...visa, metadata: { tag } },
      { idempotencyKey: key },
    );
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    expect(second.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(second.lastResponse.headers["idempotency-key"]).toBe(key);
    expect(second).toEqual(first);
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("a decline is stored too: the same key replays the 402, no second charge", async () => {
    const key = uniqueKey("declined");
    const tag = uniqueKey("tag");
    const params = { ...visa, payment_method: "pm_card_chargeDeclinedInsufficientFunds", metadata: { tag } };
    const first = await failureOf(stripe.paymentIntents.create(params, { idempotencyKey: key }));
    const second = await failureOf(stripe.paymentIntents.create(params, { idempotencyKey: key }));
    expect(first).toMatchObject({ statusCode: 402, decline_code: "insufficient_funds" });
    expect(second).toMatchObject({ statusCode: 402, decline_code: "insufficient_funds" });
    expect(second.headers["idempotent-replayed"]).toBe("true");
    expect(second.payment_intent).toEqual(first.payment_intent);
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("metadata order does not matter; other parameters or another endpoint are an idempotency_error (400)", async () => {
    const key = uniqueKey("reuse");
    const a = await stripe.paymentIntents.create(
      { ...visa, metadata: { a: "1", b: "2" } },
      { idempotencyKey: key },
    );
    const b = await raw(provider.url, "/v1/payment_intents", {
      body: "metadata[b]=2&amount=1999&currency=usd&payment_method=pm_card_visa&confirm=true&metadata[a]=1",
      headers: { ...TEST_AUTH, "idempotency-key": key },
    });
    expect(b.status).toBe(200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.body.id).toBe(a.id);

    const other = await failureOf(
      stripe.paymentIntents.create({ ...visa, amount: 2000 }, { idempotencyKey: key }),
    );
    expect(other).toMatchObject({
      type: "StripeIdempotencyError",
      rawType: "idempotency_error",
      statusCode: 400,
    });
    expect(other.headers["stripe-should-retry"]).toBe("false");
    const elsewhere = await failureOf(
      stripe.refunds.create({ payment_intent: a.id }, { idempotencyKey: key }),
    );
    expect(elsewhere).toMatchObject({ rawType: "idempotency_error", statusCode: 400 });
  });

  it("a concurrent request with the key in use: 409 idempotency_key_in_use, Stripe-Should-Retry true, nothing done", async () => {
    const key = uniqueKey("in-use");
    const tag = uniqueKey("tag");
    const params = { ...visa, payment_method: "pm_card_slow", metadata: { tag } };
    const slow = stripe.paymentIntents.create(params, { idempotencyKey: key });
    await sleep(300);
    const second = await failureOf(stripe.paymentIntents.create(params, { idempotencyKey: key }));
    expect(second).toMatchObject({ type: "StripeAPIError", statusCode: 409, code: "idempotency_key_in_use" });
    expect(second.headers["stripe-should-retry"]).toBe("true");
    expect(second.headers["retry-after"]).toBe("1");
    const first = await slow;
    expect(first.status).toBe("succeeded");
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("the SDK with retries follows Stripe-Should-Retry on the 409 and gets the first request's answer", async () => {
    const key = uniqueKey("sdk-retry");
    const tag = uniqueKey("tag");
    const params = { ...visa, payment_method: "pm_card_slow", metadata: { tag } };
    const patient = sdk(provider.url, { maxNetworkRetries: 5 });
    // The SDK emits "request" per attempt it sends, "response" once, for the answer it returns.
    let attempts = 0;
    patient.on("request", (e: { idempotency_key?: string }) => {
      if (e.idempotency_key === key) attempts++;
    });
    const slow = stripe.paymentIntents.create(params, { idempotencyKey: key });
    await sleep(200);
    const retried = await patient.paymentIntents.create(params, { idempotencyKey: key });
    const first = await slow;
    expect(retried.id).toBe(first.id);
    expect(retried.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("ten concurrent requests with one key make one PaymentIntent; the rest replay it or get 409", async () => {
    const key = uniqueKey("storm");
    const tag = uniqueKey("tag");
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        stripe.paymentIntents.create({ ...visa, metadata: { tag } }, { idempotencyKey: key }),
      ),
    );
    const ids = new Set(outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value.id] : [])));
    expect(ids.size).toBe(1);
    for (const o of outcomes) {
      if (o.status === "rejected")
        expect(o.reason).toMatchObject({ statusCode: 409, code: "idempotency_key_in_use" });
    }
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("confirm, capture, cancel and refunds are keyed the same way", async () => {
    const pi = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    const key = uniqueKey("capture");
    const a = await stripe.paymentIntents.capture(
      pi.id,
      { amount_to_capture: 1000 },
      { idempotencyKey: key },
    );
    const b = await stripe.paymentIntents.capture(
      pi.id,
      { amount_to_capture: 1000 },
      { idempotencyKey: key },
    );
    expect(b.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(b).toEqual(a);
    const refundKey = uniqueKey("refund");
    const r1 = await stripe.refunds.create(
      { payment_intent: pi.id, amount: 100 },
      { idempotencyKey: refundKey },
    );
    const r2 = await stripe.refunds.create(
      { payment_intent: pi.id, amount: 100 },
      { idempotencyKey: refundKey },
    );
    expect(r2.id).toBe(r1.id);
    expect((await db.refundsOf(pi.id)).count).toBe(1);
  });

  it("a key longer than 255 characters is refused", async () => {
    const err = await failureOf(stripe.paymentIntents.create(visa, { idempotencyKey: "k".repeat(256) }));
    expect(err).toMatchObject({ statusCode: 400, param: "Idempotency-Key" });
  });
});

describe("retention", () => {
  it("a key is forgotten after PROVIDER_KEY_RETENTION_SECONDS: the same request then makes a new PaymentIntent", async () => {
    const short = await startProvider({
      databaseUrl: databaseUrl(),
      env: { PROVIDER_KEY_RETENTION_SECONDS: "1" },
    });
    try {
      const client = sdk(short.url);
      const key = uniqueKey("retention");
      const tag = uniqueKey("tag");
      const first = await client.paymentIntents.create(
        { ...visa, metadata: { tag } },
        { idempotencyKey: key },
      );
      const replay = await client.paymentIntents.create(
        { ...visa, metadata: { tag } },
        { idempotencyKey: key },
      );
      expect(replay.id).toBe(first.id);
      await sleep(1300);
      const fresh = await client.paymentIntents.create(
        { ...visa, metadata: { tag } },
        { idempotencyKey: key },
      );
      expect(fresh.id).not.toBe(first.id);
      expect(fresh.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
      expect(await db.intentsTagged(tag)).toBe(2);
    } finally {
      await short.stop();
    }
  });
});
