import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, sdk, uniqueKey, visa } from "./test-support";

let provider: ProviderProcess;
let stripe: Stripe;
const db = openDb();

beforeAll(async () => {
  provider = await startProvider({ databaseUrl: databaseUrl(), env: { PROVIDER_SLOW_CARD_MS: "300" } });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await db.close();
});

describe("POST /v1/payment_intents with confirm=true", () => {
  it("a good card: succeeded, its charge in latest_charge, the amount received, the events recorded", async () => {
    const pi = await stripe.paymentIntents.create(
      { ...visa, metadata: { order_id: "o_1", payment_id: "p_1" }, description: "Order o_1" },
      { idempotencyKey: uniqueKey("visa") },
    );
    expect(pi).toMatchObject({
      object: "payment_intent",
      status: "succeeded",
      amount: 1999,
      amount_received: 1999,
      amount_capturable: 0,
      currency: "usd",
      payment_method: "pm_card_visa",
      last_payment_error: null,
      metadata: { order_id: "o_1", payment_id: "p_1" },
      description: "Order o_1",
      livemode: false,
    });
    expect(pi.id).toMatch(/^pi_/);
    expect(pi.latest_charge).toMatch(/^ch_/);
    expect(Number.isInteger(pi.created)).toBe(true);
    expect(pi.lastResponse.headers["request-id"]).toMatch(/^req_/);
    expect(await db.eventTypes(pi.id)).toEqual(["payment_intent.created", "payment_intent.succeeded"]);
    expect(await db.eventTypes(pi.latest_charge as string)).toEqual(["charge.succeeded"]);
  });

  it("Stripe's test cards for other brands succeed too", async () => {
    for (const pm of ["pm_card_mastercard", "pm_card_amex", "pm_card_visa_debit"]) {
      const pi = await stripe.paymentIntents.create({ ...visa, payment_method: pm });
      expect(pi.status, pm).toBe("succeeded");
    }
  });

  it("pm_card_slow succeeds after the configured delay", async () => {
    const started = performance.now();
    const pi = await stripe.paymentIntents.create({ ...visa, payment_method: "pm_card_slow" });
    expect(pi.status).toBe("succeeded");
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
  });

  it.each([
    ["pm_card_declined", "card_declined", "generic_decline"],
    ["pm_card_chargeDeclined", "card_declined", "generic_decline"],
    ["pm_card_visa_chargeDeclined", "card_declined", "generic_decline"],
    ["pm_card_chargeDeclinedInsufficientFunds", "card_declined", "insufficient_funds"],
    ["pm_card_visa_chargeDeclinedInsufficientFunds", "card_declined", "insufficient_funds"],
    ["pm_card_chargeDeclinedLostCard", "card_declined", "lost_card"],
    ["pm_card_chargeDeclinedStolenCard", "card_declined", "stolen_card"],
    ["pm_card_chargeDeclinedFraudulent", "card_declined", "fraudulent"],
    ["pm_card_chargeDeclinedExpiredCard", "expired_card", "expired_card"],
    ["pm_card_chargeDeclinedIncorrectCvc", "incorrect_cvc", "incorrect_cvc"],
    ["pm_card_chargeDeclinedProcessingError", "processing_error", "processing_error"],
    ["pm_card_visa_chargeDeclinedVelocityLimitExceeded", "card_declined", "card_velocity_exceeded"],
  ])(
    "%s is declined: 402 card_error %s / %s, the intent back in requires_payment_method",
    async (pm, code, decline) => {
      const err = await failureOf(stripe.paymentIntents.create({ ...visa, payment_method: pm }));
      expect(err).toMatchObject({
        type: "StripeCardError",
        rawType: "card_error",
        statusCode: 402,
        code,
        decline_code: decline,
      });
      expect(err.headers["stripe-should-retry"]).toBe("false");
      const pi = err.payment_intent as Stripe.PaymentIntent;
      expect(pi).toMatchObject({
        status: "requires_payment_method",
        payment_method: null,
        amount_received: 0,
        last_payment_error: { type: "card_error", code, decline_code: decline, payment_method: { id: pm } },
      });
      expect(pi.latest_charge).toMatch(/^ch_/);
      // The stored intent is the one the error carried.
      expect(await stripe.paymentIntents.retrieve(pi.id)).toEqual(pi);
      expect(await db.eventTypes(pi.id)).toEqual(["payment_intent.created", "payment_intent.payment_failed"]);
      expect(await db.eventTypes(pi.latest_charge as string)).toEqual(["charge.failed"]);
    },
  );

  it("pm_card_authenticationRequired stops at requires_action with a next_action", async () => {
    const pi = await stripe.paymentIntents.create({
      ...visa,
      payment_method: "pm_card_authenticationRequired",
    });
    expect(pi).toMatchObject({ status: "requires_action", amount_received: 0, latest_charge: null });
    expect(pi.next_action?.type).toBe("use_stripe_sdk");
    const redirected = await stripe.paymentIntents.create({
      ...visa,
      payment_method: "pm_card_threeDSecure2Required",
      return_url: "https://shop.example/return",
    });
    expect(redirected.next_action).toMatchObject({
      type: "redirect_to_url",
      redirect_to_url: { return_url: "https://shop.example/return" },
    });
    expect(await db.eventTypes(pi.id)).toEqual(["payment_intent.created", "payment_intent.requires_action"]);
  });
});

describe("the steps one by one", () => {
  it("create without confirming, then confirm: requires_payment_method → requires_confirmation → succeeded", async () => {
    const bare = await stripe.paymentIntents.create({ amount: 500, currency: "EUR" });
    expect(bare).toMatchObject({ status: "requires_payment_method", currency: "eur", payment_method: null });
    const withMethod = await stripe.paymentIntents.create({
      amount: 500,
      currency: "eur",
      payment_method: "pm_card_visa",
    });
    expect(withMethod.status).toBe("requires_confirmation");
    const confirmed = await stripe.paymentIntents.confirm(bare.id, { payment_method: "pm_card_mastercard" });
    expect(confirmed).toMatchObject({
      status: "succeeded",
      payment_method: "pm_card_mastercard",
      amount_received: 500,
    });
    const again = await failureOf(stripe.paymentIntents.confirm(bare.id));
    expect(again).toMatchObject({ statusCode: 400, code: "payment_intent_unexpected_state" });
  });

  it("a declined intent can be confirmed again with another card", async () => {
    const err = await failureOf(
      stripe.paymentIntents.create({ ...visa, payment_method: "pm_card_chargeDeclined" }),
    );
    const id = (err.payment_intent as Stripe.PaymentIntent).id;
    const retried = await stripe.paymentIntents.confirm(id, { payment_method: "pm_card_visa" });
    expect(retried).toMatchObject({ status: "succeeded", last_payment_error: null });
  });

  it("manual capture: requires_capture, then a partial capture; more than capturable is refused", async () => {
    const pi = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    expect(pi).toMatchObject({ status: "requires_capture", amount_capturable: 1999, amount_received: 0 });
    const tooMuch = await failureOf(stripe.paymentIntents.capture(pi.id, { amount_to_capture: 2000 }));
    expect(tooMuch).toMatchObject({ statusCode: 400, code: "amount_too_large", param: "amount_to_capture" });
    const captured = await stripe.paymentIntents.capture(pi.id, { amount_to_capture: 1500 });
    expect(captured).toMatchObject({ status: "succeeded", amount_received: 1500, amount_capturable: 0 });
    expect(await db.eventTypes(pi.id)).toEqual([
      "payment_intent.created",
      "payment_intent.amount_capturable_updated",
      "payment_intent.succeeded",
    ]);
    expect(await db.eventTypes(pi.latest_charge as string)).toEqual(["charge.succeeded", "charge.captured"]);
    const twice = await failureOf(stripe.paymentIntents.capture(pi.id));
    expect(twice).toMatchObject({ code: "payment_intent_unexpected_state" });
  });

  it("cancel: from requires_capture or requires_payment_method; never a succeeded one", async () => {
    const held = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    const canceled = await stripe.paymentIntents.cancel(held.id, {
      cancellation_reason: "requested_by_customer",
    });
    expect(canceled).toMatchObject({
      status: "canceled",
      cancellation_reason: "requested_by_customer",
      amount_capturable: 0,
    });
    expect(typeof canceled.canceled_at).toBe("number");
    const bare = await stripe.paymentIntents.create({ amount: 100, currency: "usd" });
    expect((await stripe.paymentIntents.cancel(bare.id)).status).toBe("canceled");
    const paid = await stripe.paymentIntents.create(visa);
    const refused = await failureOf(stripe.paymentIntents.cancel(paid.id));
    expect(refused).toMatchObject({ statusCode: 400, code: "payment_intent_unexpected_state" });
    expect(await db.eventTypes(held.id)).toContain("payment_intent.canceled");
  });

  it("retrieve: the intent, or 404 resource_missing", async () => {
    const pi = await stripe.paymentIntents.create(visa);
    expect(await stripe.paymentIntents.retrieve(pi.id)).toEqual(pi);
    const missing = await failureOf(stripe.paymentIntents.retrieve("pi_000000000000000000000000"));
    expect(missing).toMatchObject({
      type: "StripeInvalidRequestError",
      statusCode: 404,
      code: "resource_missing",
    });
  });
});

describe("parameters, checked as Stripe checks them (nothing stored)", () => {
  it.each([
    [{ amount: 100, currency: "usd", colour: "red" }, "parameter_unknown", "colour"],
    [{ currency: "usd" }, "parameter_missing", "amount"],
    [{ amount: "ten", currency: "usd" }, "parameter_invalid_integer", "amount"],
    [{ amount: 0, currency: "usd" }, "amount_too_small", "amount"],
    [{ amount: 100_000_000, currency: "usd" }, "amount_too_large", "amount"],
    [
      { amount: 100, currency: "usd", payment_method: "pm_card_nonsense" },
      "resource_missing",
      "payment_method",
    ],
    [{ amount: 100, currency: "usd", confirm: true }, "parameter_missing", "payment_method"],
    [{ amount: 100, currency: "usd", capture_method: "later" }, "parameter_invalid", "capture_method"],
  ])("%j → 400 %s on %s", async (params, code, param) => {
    const key = uniqueKey("invalid");
    const err = await failureOf(
      stripe.paymentIntents.create(params as unknown as Stripe.PaymentIntentCreateParams, {
        idempotencyKey: key,
      }),
    );
    expect(err).toMatchObject({ type: "StripeInvalidRequestError", statusCode: 400, code, param });
    expect(err.headers["stripe-should-retry"]).toBe("false");
    // The key stays unused: a good request with it runs.
    const ok = await stripe.paymentIntents.create({ amount: 100, currency: "usd" }, { idempotencyKey: key });
    expect(ok.status).toBe("requires_payment_method");
  });

  it.each([
    [{ amount: 49, currency: "usd" }, "amount_too_small", "amount"],
    [{ amount: 1850, currency: "jpy" }, null, null],
    [{ amount: 40, currency: "jpy" }, "amount_too_small", "amount"],
    [{ amount: 5125, currency: "kwd" }, "amount_not_in_steps", "amount"],
    // A currency Stripe does not list is refused, as Stripe refuses it.
    [{ amount: 100, currency: "qzz" }, "parameter_invalid", "currency"],
  ])(
    "amounts as Stripe takes them in their currency (decision 0175): %j → %s",
    async (params, code, param) => {
      const made = stripe.paymentIntents.create({ ...params, payment_method: "pm_card_visa", confirm: true });
      if (code === null) return void expect((await made).status).toBe("succeeded");
      expect(await failureOf(made)).toMatchObject({ statusCode: 400, code, param });
    },
  );

  it("metadata in bracket syntax, with Stripe's limits", async () => {
    const pi = await stripe.paymentIntents.create({
      amount: 100,
      currency: "usd",
      metadata: { "a key": "a value", n: "1" },
    });
    expect(pi.metadata).toEqual({ "a key": "a value", n: "1" });
    const tooLong = await failureOf(
      stripe.paymentIntents.create({ amount: 100, currency: "usd", metadata: { k: "x".repeat(501) } }),
    );
    expect(tooLong).toMatchObject({ statusCode: 400, param: "metadata[k]" });
  });
});
