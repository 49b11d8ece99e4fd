import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, sdk, uniqueKey, visa } from "./test-support";

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

const paid = (amount: number) => stripe.paymentIntents.create({ ...visa, amount });

describe("POST /v1/refunds", () => {
  it("refunds part of a PaymentIntent, then the rest; the charge's amount_refunded follows, events recorded", async () => {
    const pi = await paid(1000);
    const part = await stripe.refunds.create(
      { payment_intent: pi.id, amount: 400, metadata: { refund_id: "r_1" }, reason: "requested_by_customer" },
      { idempotencyKey: uniqueKey("part") },
    );
    expect(part).toMatchObject({
      object: "refund",
      amount: 400,
      currency: "usd",
      status: "succeeded",
      payment_intent: pi.id,
      charge: pi.latest_charge,
      metadata: { refund_id: "r_1" },
      reason: "requested_by_customer",
    });
    expect(part.id).toMatch(/^re_/);
    const rest = await stripe.refunds.create(
      { payment_intent: pi.id },
      { idempotencyKey: uniqueKey("rest") },
    );
    expect(rest.amount).toBe(600);
    expect(await db.refundsOf(pi.id)).toEqual({ count: 2, sum: 1000, amountRefunded: 1000 });
    expect(await db.eventTypes(part.id)).toEqual(["refund.created"]);
    expect(await db.eventTypes(pi.latest_charge as string)).toEqual([
      "charge.succeeded",
      "charge.refunded",
      "charge.refunded",
    ]);
    // By the charge's id too, as Stripe takes it.
    const other = await paid(300);
    const byCharge = await stripe.refunds.create({ charge: other.latest_charge as string, amount: 100 });
    expect(byCharge.payment_intent).toBe(other.id);
  });

  it("more than is left: 400 amount_too_large naming the rest; nothing left: charge_already_refunded", async () => {
    const pi = await paid(1000);
    await stripe.refunds.create({ payment_intent: pi.id, amount: 900 });
    const tooMuch = await failureOf(stripe.refunds.create({ payment_intent: pi.id, amount: 101 }));
    expect(tooMuch).toMatchObject({ statusCode: 400, code: "amount_too_large", param: "amount" });
    expect((tooMuch as unknown as { message: string }).message).toContain("(100)");
    await stripe.refunds.create({ payment_intent: pi.id, amount: 100 });
    const none = await failureOf(stripe.refunds.create({ payment_intent: pi.id, amount: 1 }));
    expect(none).toMatchObject({ statusCode: 400, code: "charge_already_refunded" });
    expect(await db.refundsOf(pi.id)).toEqual({ count: 2, sum: 1000, amountRefunded: 1000 });
  });

  it("20 concurrent refunds with different keys never exceed the charge: exactly what fits is refunded", async () => {
    const pi = await paid(1000);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        stripe.refunds.create(
          { payment_intent: pi.id, amount: 150 },
          { idempotencyKey: uniqueKey(`race-${i}`) },
        ),
      ),
    );
    // 6 × 150 = 900 fit in 1000; the 7th would make 1050.
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(6);
    for (const o of outcomes) {
      if (o.status === "rejected")
        expect(o.reason).toMatchObject({ statusCode: 400, code: "amount_too_large" });
    }
    expect(await db.refundsOf(pi.id)).toEqual({ count: 6, sum: 900, amountRefunded: 900 });
  });

  it("no captured charge: 400 charge_not_refundable (declined, awaiting capture, canceled, awaiting action)", async () => {
    const declined = (
      await failureOf(stripe.paymentIntents.create({ ...visa, payment_method: "pm_card_chargeDeclined" }))
    ).payment_intent as Stripe.PaymentIntent;
    const held = await stripe.paymentIntents.create({ ...visa, capture_method: "manual" });
    const canceled = await stripe.paymentIntents.cancel(
      (await stripe.paymentIntents.create({ amount: 100, currency: "usd" })).id,
    );
    const action = await stripe.paymentIntents.create({
      ...visa,
      payment_method: "pm_card_authenticationRequired",
    });
    for (const pi of [declined, held, canceled, action]) {
      const err = await failureOf(stripe.refunds.create({ payment_intent: pi.id, amount: 100 }));
      expect(err, pi.status).toMatchObject({
        statusCode: 400,
        code: "charge_not_refundable",
        param: "payment_intent",
      });
    }
    const failedCharge = await failureOf(stripe.refunds.create({ charge: declined.latest_charge as string }));
    expect(failedCharge).toMatchObject({ statusCode: 400, code: "charge_not_refundable", param: "charge" });
  });

  it("an unknown PaymentIntent or charge: 404 resource_missing", async () => {
    const pi = await failureOf(
      stripe.refunds.create({ payment_intent: "pi_000000000000000000000000", amount: 1 }),
    );
    expect(pi).toMatchObject({ statusCode: 404, code: "resource_missing", param: "payment_intent" });
    const ch = await failureOf(stripe.refunds.create({ charge: "ch_000000000000000000000000", amount: 1 }));
    expect(ch).toMatchObject({ statusCode: 404, code: "resource_missing", param: "charge" });
  });

  it("a refund's amount in its payment's currency steps: 3-decimal currencies end in 0 (decision 0175)", async () => {
    const pi = await stripe.paymentIntents.create({ ...visa, amount: 5120, currency: "kwd" });
    const odd = await failureOf(stripe.refunds.create({ payment_intent: pi.id, amount: 105 }));
    expect(odd).toMatchObject({ statusCode: 400, code: "amount_not_in_steps", param: "amount" });
    expect((await stripe.refunds.create({ payment_intent: pi.id, amount: 100 })).amount).toBe(100);
  });

  it("parameters: one of payment_intent or charge is required, unknown ones are refused", async () => {
    const none = await failureOf(stripe.refunds.create({ amount: 1 }));
    expect(none).toMatchObject({ statusCode: 400, code: "parameter_missing" });
    const unknown = await failureOf(
      stripe.refunds.create({
        payment_intent: "pi_1",
        colour: "red",
      } as unknown as Stripe.RefundCreateParams),
    );
    expect(unknown).toMatchObject({ statusCode: 400, code: "parameter_unknown", param: "colour" });
  });
});

describe("GET /v1/refunds", () => {
  it("retrieve one; list a PaymentIntent's refunds, newest first", async () => {
    const pi = await paid(1000);
    const a = await stripe.refunds.create({ payment_intent: pi.id, amount: 100 });
    const b = await stripe.refunds.create({ payment_intent: pi.id, amount: 200 });
    expect(await stripe.refunds.retrieve(a.id)).toEqual(a);
    const listed = await stripe.refunds.list({ payment_intent: pi.id });
    expect(listed.data.map((r) => r.id)).toEqual([b.id, a.id]);
    const byCharge = await stripe.refunds.list({ charge: pi.latest_charge as string, limit: 1 });
    expect(byCharge).toMatchObject({ object: "list", has_more: true, url: "/v1/refunds" });
    expect(byCharge.data.map((r) => r.id)).toEqual([b.id]);
    const missing = await failureOf(stripe.refunds.retrieve("re_000000000000000000000000"));
    expect(missing).toMatchObject({ statusCode: 404, code: "resource_missing" });
  });
});
