import { describe, expect } from "vitest";
import { db } from "../db";
import { errorDetailsOf } from "../errors";
import { ledgerBalances, verifyLedger } from "../ledger";
import type { PaymentProvider } from "../provider";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { callOutcome, createTestOrder, newKey, pay } from "../test/payments";
import { operatorContext } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { expireAuthorizations } from "./expiry";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("authorizations");
});

/** An order of two tees, authorized with a manual capture: HELD EUR cents held. */
const HELD = 5000;
async function authorized(p: PaymentProvider = provider.client) {
  const order = await createTestOrder(account);
  const ctx = contextFor(account, { "idempotency-key": newKey() }, p);
  const paid = await createCaller(ctx).payments.create({
    orderId: order.id,
    paymentMethod: "pm_card_visa",
    captureMethod: "manual",
  });
  return { order, payment: paid };
}

function capture(key: string, input: { id: string; amountMinor?: number }) {
  const ctx = operatorContext({ "idempotency-key": key }, provider.client);
  return callOutcome(ctx.resHeaders, () => createCaller(ctx).admin.payments.capture(input));
}

function cancel(key: string, input: { id: string }) {
  const ctx = operatorContext({ "idempotency-key": key }, provider.client);
  return callOutcome(ctx.resHeaders, () => createCaller(ctx).admin.payments.cancel(input));
}

/** The payment's ledger transactions by kind, with each one's positive legs' sum. */
async function books(paymentId: string) {
  const rows = await db().$queryRaw<{ kind: string; moved: bigint }[]>`
    SELECT t.kind, sum(e.amount_minor) FILTER (WHERE e.amount_minor > 0)::bigint AS moved
      FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
     WHERE t.payment_id = ${paymentId}::uuid GROUP BY t.kind`;
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.moved)]));
}

describe("manual capture", () => {
  it("authorizes and holds: the answer, the order, a pending hold in the ledger and in the balances", async () => {
    const { order, payment } = await authorized();
    expect(payment).toMatchObject({ status: "authorized", captureMethod: "manual", amountCaptured: 0 });
    const deadline = Date.parse(payment.captureBefore ?? "");
    expect(deadline - Date.now()).toBeGreaterThan(6 * 86_400_000);
    expect((await db().order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe("authorized");
    expect(await books(payment.id)).toEqual({ authorization_hold: HELD });
    const clearing = (await ledgerBalances(db())).find(
      (a) => a.code === "provider_clearing" && a.currency === "EUR",
    );
    expect(clearing?.pendingMinor).toBeGreaterThanOrEqual(HELD);
    expect(clearing?.availableMinor).toBe(clearing?.balanceMinor);
    const atProvider = await provider.client.getCharge(payment.providerChargeId ?? "");
    expect(atProvider).toMatchObject({ status: "authorized", amountCapturable: HELD });
  });

  it("captures part once: the rest released, replayed by key, refunds only of what was captured", async () => {
    const { order, payment } = await authorized();
    const key = newKey();
    const first = await capture(key, { id: payment.id, amountMinor: 3000 });
    if (!first.ok) throw first.error;
    expect(first.data).toMatchObject({ status: "succeeded", amount: HELD, amountCaptured: 3000 });
    const again = await capture(key, { id: payment.id, amountMinor: 3000 });
    expect(again).toMatchObject({ ok: true, data: first.data });
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    expect(await books(payment.id)).toEqual({
      authorization_hold: HELD,
      hold_captured: HELD,
      payment_capture: 3000,
    });
    expect((await db().order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe("paid");
    expect(await provider.client.getCharge(payment.providerChargeId ?? "")).toMatchObject({
      status: "succeeded",
      amountReceived: 3000,
    });

    const tooMuch = await callOutcome(new Headers(), () =>
      createCaller(operatorContext({ "idempotency-key": newKey() }, provider.client)).admin.refunds.create({
        paymentId: payment.id,
        amountMinor: 3001,
        reason: "more than captured",
      }),
    );
    expect(tooMuch.ok).toBe(false);
    if (!tooMuch.ok) expect(errorDetailsOf(tooMuch.error)?.details).toMatchObject({ refundableMinor: 3000 });
    expect((await verifyLedger(db())).balanced).toBe(true);
  });

  it("cancels: the hold voided, the order payable again; a capture after it is refused, stored", async () => {
    const { order, payment } = await authorized();
    const canceled = await cancel(newKey(), { id: payment.id });
    if (!canceled.ok) throw canceled.error;
    expect(canceled.data).toMatchObject({ status: "canceled", amountCaptured: 0 });
    expect(await books(payment.id)).toEqual({ authorization_hold: HELD, hold_voided: HELD });
    expect((await db().order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe("pending_payment");

    const key = newKey();
    const late = await capture(key, { id: payment.id });
    expect(late.ok).toBe(false);
    if (late.ok) return;
    expect(late.error.code).toBe("CONFLICT");
    expect(errorDetailsOf(late.error)?.details).toMatchObject({
      reason: "payment_not_capturable",
      state: "canceled",
    });
    expect(late.headers.get("retry-after")).toBeNull();
    const replay = await capture(key, { id: payment.id });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    // The order can be paid again, with another key.
    const repaid = await pay(
      account,
      newKey(),
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(repaid).toMatchObject({ ok: true, data: { status: "succeeded" } });
  });

  it("a capture above the hold is refused before the provider is asked", async () => {
    const { payment } = await authorized();
    const over = await capture(newKey(), { id: payment.id, amountMinor: HELD + 1 });
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.error.code).toBe("BAD_REQUEST");
    expect(await db().authorizationAction.count({ where: { paymentId: payment.id } })).toBe(0);
  });

  it("a customer's key cannot capture or cancel", async () => {
    const { payment } = await authorized();
    const ctx = contextFor(account, { "idempotency-key": newKey() }, provider.client);
    const tried = await callOutcome(ctx.resHeaders, () =>
      createCaller(ctx).admin.payments.capture({ id: payment.id }),
    );
    expect(tried).toMatchObject({ ok: false, error: { code: "UNAUTHORIZED" } });
    const tried2 = await callOutcome(ctx.resHeaders, () =>
      createCaller(ctx).admin.payments.cancel({ id: payment.id }),
    );
    expect(tried2).toMatchObject({ ok: false, error: { code: "UNAUTHORIZED" } });
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe("authorized");
  });
});

describe("captures and cancels racing", () => {
  it("20 captures and cancels with different keys on one authorization: one wins, the rest are told why", async () => {
    const { payment } = await authorized();
    const calls = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? capture(newKey(), { id: payment.id, amountMinor: 1000 + i })
        : cancel(newKey(), { id: payment.id }),
    );
    const outcomes = await Promise.all(calls);
    const won = outcomes.filter((o) => o.ok);
    expect(won).toHaveLength(1);
    for (const lost of outcomes.filter((o) => !o.ok)) {
      if (lost.ok) continue;
      expect(lost.error.code).toBe("CONFLICT");
      expect(["payment_not_capturable", undefined]).toContain(errorDetailsOf(lost.error)?.details?.reason);
    }
    const actions = await db().authorizationAction.findMany({ where: { paymentId: payment.id } });
    expect(actions.filter((a) => a.status === "succeeded")).toHaveLength(1);
    const atProvider = await provider.client.getCharge(payment.providerChargeId ?? "");
    const winner = won[0];
    if (!winner?.ok) throw new Error("no winner");
    if (winner.data.status === "succeeded") {
      expect(atProvider).toMatchObject({ status: "succeeded", amountReceived: winner.data.amountCaptured });
      expect((await books(payment.id)).hold_captured).toBe(HELD);
    } else {
      expect(atProvider?.status).toBe("canceled");
      expect((await books(payment.id)).hold_voided).toBe(HELD);
    }
  });
});

describe("expiry", () => {
  it("cancels an authorization past its deadline once, across passes; a capture after it is refused", async () => {
    const { payment } = await authorized();
    await db()
      .$executeRaw`UPDATE payments SET capture_before = now() - interval '1 second' WHERE id = ${payment.id}::uuid`;
    const deps = { prisma: db(), provider: provider.client };
    expect(await expireAuthorizations(deps)).toBeGreaterThanOrEqual(1);
    expect(await expireAuthorizations(deps)).toBe(0);
    const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(row).toMatchObject({ status: "canceled", failureCode: "expired" });
    expect(await books(payment.id)).toEqual({ authorization_hold: HELD, hold_voided: HELD });
    expect((await provider.client.getCharge(payment.providerChargeId ?? ""))?.status).toBe("canceled");

    const late = await capture(newKey(), { id: payment.id });
    expect(late.ok).toBe(false);
    if (!late.ok) expect(errorDetailsOf(late.error)?.details).toMatchObject({ state: "expired" });
  });
});

describe("the database", () => {
  it("refuses a capture posted beyond the hold, and a capture after the hold was voided", async () => {
    const { payment } = await authorized();
    const capturing = (amount: number, release: "hold_captured" | "hold_voided") =>
      db().$transaction(async (tx) => {
        const { StatementBuilder } = await import("@idempotent-checkout/idempotency/sql");
        const { holdRelease, paymentCapture } = await import("../ledger/postings");
        const { rawQuery } = await import("../db");
        const b = new StatementBuilder();
        const hold = { paymentId: payment.id, amountMinor: HELD, currency: "EUR", description: "test" };
        holdRelease(b, hold, release);
        if (release === "hold_captured")
          paymentCapture(b, {
            paymentId: payment.id,
            amountMinor: amount,
            currency: "EUR",
            description: "test",
          });
        await rawQuery(tx, b.statement());
      });
    await expect(capturing(HELD + 1, "hold_captured")).rejects.toThrow(/captures 5001 of the 5000 held/);
    await capturing(0, "hold_voided");
    await expect(capturing(100, "hold_captured")).rejects.toThrow(/one_hold_resolution|duplicate key/);
  });
});
