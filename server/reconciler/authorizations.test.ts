import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { db } from "../db";
import type { Charge, PaymentProvider } from "../provider";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder, newKey, startTestProvider } from "../test/payments";
import { operatorContext } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { runReconciliation } from "./reconciler";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("auth-recon");
});

/** An order of two tees (5000 EUR cents) authorized through our API with a manual capture. */
async function authorized(p: PaymentProvider = provider.client) {
  const order = await createTestOrder(account);
  const ctx = contextFor(account, { "idempotency-key": newKey() }, p);
  const payment = await createCaller(ctx).payments.create({
    orderId: order.id,
    paymentMethod: "pm_card_visa",
    captureMethod: "manual",
  });
  return { id: payment.id, chargeId: payment.providerChargeId ?? "" };
}

const operator = (p: PaymentProvider = provider.client) =>
  createCaller(operatorContext({ "idempotency-key": newKey() }, p)).admin.payments;

async function reconcile(p: PaymentProvider = provider.client, windowStart = new Date(Date.now() - 60_000)) {
  const report = await runReconciliation({ prisma: db(), provider: p }, { windowStart, graceSeconds: 0 });
  expect(report.providerError).toBeNull();
  return (paymentId: string) =>
    report.mismatches
      .filter((m) => m.paymentId === paymentId)
      .map((m) => ({ kind: m.kind, detail: m.detail }));
}

describe("the reconciler compares authorizations, captures and cancellations with the provider", () => {
  it("finds nothing wrong with authorizations held, captured in part and canceled through our API", async () => {
    const held = await authorized();
    const captured = await authorized();
    await operator().capture({ id: captured.id, amountMinor: 3000 });
    const canceled = await authorized();
    await operator().cancel({ id: canceled.id });
    const found = await reconcile();
    expect([found(held.id), found(captured.id), found(canceled.id)]).toEqual([[], [], []]);
  });

  it("reports a capture made at the provider behind our back, however old the authorization", async () => {
    const payment = await authorized();
    await db()
      .$executeRaw`UPDATE payments SET created_at = now() - interval '3 days' WHERE id = ${payment.id}::uuid`;
    await provider.client.captureCharge(payment.chargeId, { amount: 1200 }, newKey());
    // The window starts now: the authorization is found among the open holds, not by the listing.
    const found = await reconcile(provider.client, new Date(Date.now() + 1000));
    expect(found(payment.id)).toEqual([
      {
        kind: "capture_without_postings",
        detail: "the provider captured 1200 EUR of 5000 EUR; our payment is still authorized, holding 5000",
      },
    ]);
  });

  it("does not report a provider capture while our own capture of it is in flight", async () => {
    const payment = await authorized();
    await provider.client.captureCharge(payment.chargeId, {}, newKey());
    await db().$executeRaw`
      INSERT INTO authorization_actions (id, payment_id, account_id, kind, provider_key, reason, created_by)
      VALUES (${randomUUID()}::uuid, ${payment.id}::uuid, ${account.id}::uuid, 'capture', ${`in_flight_${payment.id}`},
              'operator', 'test')`;
    expect((await reconcile())(payment.id)).toEqual([]);
  });

  it("reports a hold the provider released, by a cancel behind our back or by its own expiry", async () => {
    const canceled = await authorized();
    await provider.client.cancelCharge(canceled.chargeId, { reason: "fraudulent" }, newKey());
    expect((await reconcile())(canceled.id)).toEqual([
      {
        kind: "hold_released_at_provider",
        detail: "the provider's payment is canceled (fraudulent); our books still hold 5000 EUR",
      },
    ]);

    // A provider whose authorizations last a second, shorter than our deadline of seven days.
    const expiring = await startTestProvider({ PROVIDER_AUTHORIZATION_TTL_SECONDS: "1" });
    try {
      const expired = await authorized(expiring.client);
      await expect
        .poll(async () => (await expiring.client.getCharge(expired.chargeId))?.status, { timeout: 10_000 })
        .toBe("canceled");
      expect((await reconcile(expiring.client))(expired.id)).toEqual([
        {
          kind: "hold_released_at_provider",
          detail: "the provider's payment is canceled (automatic); our books still hold 5000 EUR",
        },
      ]);
    } finally {
      await expiring.stop();
    }
  }, 30_000);

  it("reports a hold of another amount at the provider (a partial authorization)", async () => {
    const payment = await authorized();
    // The simulator authorizes all or nothing; Stripe may authorize part (amount_capturable less
    // than amount). A provider that reports this payment so.
    const partly = <T extends Charge | null>(c: T): T =>
      c?.id === payment.chargeId ? { ...c, amountCapturable: 4000 } : c;
    const partial: PaymentProvider = {
      ...provider.client,
      getCharge: async (id) => partly(await provider.client.getCharge(id)),
      listCharges: async function* (opts) {
        for await (const c of provider.client.listCharges(opts)) yield partly(c);
      },
    };
    expect((await reconcile(partial))(payment.id)).toEqual([
      { kind: "hold_amount_mismatch", detail: "the provider holds 4000 EUR, our books 5000 EUR" },
    ]);
  });

  it("reports a capture whose amount differs from the provider's", async () => {
    const payment = await authorized();
    await operator().capture({ id: payment.id, amountMinor: 3000 });
    await db().$executeRaw`UPDATE payments SET captured_minor = 2500 WHERE id = ${payment.id}::uuid`;
    expect((await reconcile())(payment.id)).toEqual([
      { kind: "captured_amount_mismatch", detail: "the provider captured 3000, our books 2500 (EUR)" },
    ]);
  });

  it("reports a canceled payment the provider captured, or still holds", async () => {
    // A provider that answers our cancel as done while it did something else.
    const answeringCanceled = (act: (id: string) => Promise<unknown>): PaymentProvider => ({
      ...provider.client,
      cancelCharge: async (id) => {
        await act(id);
        const now = await provider.client.getCharge(id);
        if (!now) throw new Error(`no payment ${id}`);
        return {
          ...now,
          status: "canceled",
          amountCapturable: 0,
          cancellationReason: "requested_by_customer",
        };
      },
    });
    const captured = await authorized();
    await operator(answeringCanceled((id) => provider.client.captureCharge(id, {}, newKey()))).cancel({
      id: captured.id,
    });
    const stillHeld = await authorized();
    await operator(answeringCanceled(async () => undefined)).cancel({ id: stillHeld.id });

    const found = await reconcile();
    expect(found(captured.id)).toEqual([
      { kind: "captured_after_cancel", detail: "the provider captured 5000 EUR; our payment is canceled" },
    ]);
    expect(found(stillHeld.id)).toEqual([
      { kind: "hold_open_at_provider", detail: "the provider still holds 5000 EUR; our payment is canceled" },
    ]);
  });
});
