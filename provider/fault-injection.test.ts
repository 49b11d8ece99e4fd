import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, raw, sdk, TEST_AUTH, uniqueKey, visa } from "./test-support";

let provider: ProviderProcess;
let stripe: Stripe;
const db = openDb();

beforeAll(async () => {
  provider = await startProvider({ databaseUrl: databaseUrl() });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await db.close();
});

const fault = (value: string) => ({ headers: { "X-Provider-Fault": value } });

describe("per-request faults (X-Provider-Fault), on every /v1 route", () => {
  it("drop: the SDK sees a connection error, yet the PaymentIntent exists; the same key then replays it", async () => {
    const key = uniqueKey("drop");
    const tag = uniqueKey("tag");
    const params = { ...visa, metadata: { tag } };
    const err = await failureOf(
      stripe.paymentIntents.create(params, { idempotencyKey: key, ...fault("drop") }),
    );
    expect(err).toMatchObject({ type: "StripeConnectionError" });
    expect(await db.intentsTagged(tag)).toBe(1);
    const retried = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(retried.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("error=500 and error=503: nothing done, Stripe-Should-Retry true (503 with Retry-After); the retry makes one", async () => {
    const key = uniqueKey("error");
    const tag = uniqueKey("tag");
    const params = { ...visa, metadata: { tag } };
    const e500 = await failureOf(
      stripe.paymentIntents.create(params, { idempotencyKey: key, ...fault("error=500") }),
    );
    expect(e500).toMatchObject({ type: "StripeAPIError", statusCode: 500, rawType: "api_error" });
    expect(e500.headers["stripe-should-retry"]).toBe("true");
    const e503 = await failureOf(
      stripe.paymentIntents.create(params, { idempotencyKey: key, ...fault("error=503") }),
    );
    expect(e503).toMatchObject({ statusCode: 503 });
    expect(e503.headers["retry-after"]).toBe("1");
    expect(await db.intentsTagged(tag)).toBe(0);
    const made = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(made.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("the SDK with retries retries an injected 500 as Stripe-Should-Retry says, on every attempt", async () => {
    const patient = sdk(provider.url, { maxNetworkRetries: 2 });
    const statuses: number[] = [];
    patient.on("response", (e: { status: number; path: string }) => {
      if (e.path.startsWith("/v1/payment_intents")) statuses.push(e.status);
    });
    const err = await failureOf(patient.paymentIntents.create(visa, fault("error=500")));
    expect(err).toMatchObject({ statusCode: 500 });
    expect(statuses).toEqual([500]);
    // The SDK emits one "response" per answer it hands back; the attempts are in its request log.
    const requests: number[] = [];
    patient.on("request", () => requests.push(1));
    await failureOf(patient.paymentIntents.create(visa, fault("error=500")));
    expect(requests).toHaveLength(3);
  }, 20_000);

  it("latency beyond the SDK's timeout: a connection error, the PaymentIntent committed anyway, the retry replays it", async () => {
    const key = uniqueKey("latency");
    const tag = uniqueKey("tag");
    const params = { ...visa, metadata: { tag } };
    const impatient = sdk(provider.url, { timeout: 300 });
    const started = performance.now();
    const err = await failureOf(
      impatient.paymentIntents.create(params, { idempotencyKey: key, ...fault("latency=1500") }),
    );
    expect(err).toMatchObject({ type: "StripeConnectionError", detail: { code: "ETIMEDOUT" } });
    expect(performance.now() - started).toBeLessThan(1200);
    await new Promise((r) => setTimeout(r, 1300));
    const retried = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(retried.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(await db.intentsTagged(tag)).toBe(1);
  });

  it("reads, refunds, confirm, capture and cancel take faults too; a malformed header is 400", async () => {
    const pi = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    const read = await failureOf(stripe.paymentIntents.retrieve(pi.id, {}, fault("error=503")));
    expect(read).toMatchObject({ statusCode: 503 });
    const list = await failureOf(stripe.events.list({}, fault("error=500")));
    expect(list).toMatchObject({ statusCode: 500 });
    const capture = await failureOf(stripe.paymentIntents.capture(pi.id, {}, fault("error=500")));
    expect(capture).toMatchObject({ statusCode: 500 });
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("requires_capture");
    const cancel = await failureOf(stripe.paymentIntents.cancel(pi.id, {}, fault("drop")));
    expect(cancel).toMatchObject({ type: "StripeConnectionError" });
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe("canceled");
    const bad = await raw(provider.url, "/v1/refunds", {
      headers: { ...TEST_AUTH, "x-provider-fault": "explode" },
    });
    expect(bad.status).toBe(400);
  });
});

describe("random faults from PROVIDER_FAULTS (POSTs only)", () => {
  let faulty: ProviderProcess;

  beforeAll(async () => {
    faulty = await startProvider({
      databaseUrl: databaseUrl(),
      env: { PROVIDER_FAULTS: "error:0.25,drop:0.25,latency:0-30" },
    });
  }, 20_000);

  afterAll(async () => {
    await faulty?.stop();
  });

  it("retrying each key until it succeeds yields exactly one PaymentIntent per key; reads stay reliable", async () => {
    const flaky = sdk(faulty.url, { timeout: 5000 });
    const tags = Array.from({ length: 25 }, (_, i) => uniqueKey(`soak-${i}`));
    const failures: Record<string, number> = {};

    async function payWithRetries(tag: string): Promise<Stripe.PaymentIntent> {
      const key = uniqueKey("soak");
      for (let attempt = 1; ; attempt++) {
        try {
          return await flaky.paymentIntents.create({ ...visa, metadata: { tag } }, { idempotencyKey: key });
        } catch (err) {
          const e = err as { type?: string; statusCode?: number };
          const label = `${e.type}${e.statusCode ? `:${e.statusCode}` : ""}`;
          if (attempt >= 40 || (e.statusCode !== undefined && e.statusCode < 409)) throw err;
          failures[label] = (failures[label] ?? 0) + 1;
          await new Promise((r) => setTimeout(r, e.statusCode === 409 ? 100 : 10));
        }
      }
    }

    const made = await Promise.all(tags.map(payWithRetries));
    expect(new Set(made.map((p) => p.id)).size).toBe(tags.length);
    for (const tag of tags) expect(await db.intentsTagged(tag)).toBe(1);
    for (const pi of made) expect((await flaky.paymentIntents.retrieve(pi.id)).id).toBe(pi.id);
    expect(Object.keys(failures).length).toBeGreaterThan(0);
    console.info(`[soak] retried failures by kind: ${JSON.stringify(failures)}`);
  }, 30_000);
});
