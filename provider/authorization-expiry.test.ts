import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, sdk, visa } from "./test-support";

let provider: ProviderProcess;
let stripe: Stripe;
const db = openDb();

beforeAll(async () => {
  provider = await startProvider({
    databaseUrl: databaseUrl(),
    env: { PROVIDER_AUTHORIZATION_TTL_SECONDS: "1" },
  });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await db.close();
});

async function settled(id: string, timeoutMs = 5000): Promise<Stripe.PaymentIntent> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pi = await stripe.paymentIntents.retrieve(id);
    if (pi.status !== "requires_capture" || Date.now() > until) return pi;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("PROVIDER_AUTHORIZATION_TTL_SECONDS", () => {
  it("an authorization not captured in time is canceled once, reason automatic; it cannot be captured after", async () => {
    const held = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    const expired = await settled(held.id);
    expect(expired).toMatchObject({
      status: "canceled",
      cancellation_reason: "automatic",
      amount_capturable: 0,
    });
    const late = await failureOf(stripe.paymentIntents.capture(held.id));
    expect(late).toMatchObject({ statusCode: 400, code: "payment_intent_unexpected_state" });
    await new Promise((r) => setTimeout(r, 600));
    expect(await db.eventTypes(held.id)).toEqual([
      "payment_intent.created",
      "payment_intent.amount_capturable_updated",
      "payment_intent.canceled",
    ]);
  }, 10_000);

  it("leaves alone a payment captured in time, one never authorized, and another process's 7-day authorization", async () => {
    const held = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    await stripe.paymentIntents.capture(held.id);
    const paid = await stripe.paymentIntents.create(visa);
    const stripes = await startProvider({ databaseUrl: databaseUrl() });
    try {
      const week = await sdk(stripes.url).paymentIntents.create({ ...visa, capture_method: "manual" });
      await new Promise((r) => setTimeout(r, 2500));
      expect((await stripe.paymentIntents.retrieve(week.id)).status).toBe("requires_capture");
    } finally {
      await stripes.stop();
    }
    expect((await stripe.paymentIntents.retrieve(held.id)).status).toBe("succeeded");
    expect((await stripe.paymentIntents.retrieve(paid.id)).status).toBe("succeeded");
  }, 15_000);
});
