import { describe, expect } from "vitest";
import { db } from "../db";
import { errorDetailsOf } from "../errors";
import { verifyLedger } from "../ledger";
import { refundMessageId } from "../outbox/events";
import { createCaller } from "../root";
import { adminCaller } from "../test/admin";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { newKey } from "../test/payments";
import {
  declinedPayment,
  paidPayment,
  providerRefunds,
  refund,
  refundBooks,
  refundUntilSettled,
} from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { OPERATORS_ACCOUNT } from "./operators";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("refunds");
});

const reason = "damaged in transit";

describe("admin.refunds.create", () => {
  it("refunds part of a payment once: the refund, its reversal booked, its event, the order's views", async () => {
    const paid = await paidPayment(account, provider.client);
    const key = newKey();
    const first = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 1200, reason },
      provider.client,
    );
    if (!first.ok) throw first.error;
    expect(first.data).toMatchObject({
      paymentId: paid.paymentId,
      amountMinor: 1200,
      currency: "EUR",
      reason,
      status: "succeeded",
    });
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const again = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 1200, reason },
      provider.client,
    );
    expect(again).toMatchObject({ ok: true, data: first.data });
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    expect(await refundBooks(paid.paymentId)).toMatchObject({
      succeeded: 1,
      reversals: 1,
      reversal_sum: 1200,
      unbalanced: 0,
    });
    const charge = (await db().payment.findUniqueOrThrow({ where: { id: paid.paymentId } }))
      .providerChargeId as string;
    expect(await providerRefunds(provider.client, charge)).toMatchObject({ count: 1, sum: 1200 });
    const row = await db().refund.findUniqueOrThrow({ where: { id: first.data.id } });
    expect(row).toMatchObject({ accountId: account.id, createdBy: "test operator" });
    expect(row.refundRequestedAt).not.toBeNull();
    const event = await db().outboxMessage.findUniqueOrThrow({
      where: { id: refundMessageId(first.data.id) },
    });
    expect(event.payload).toMatchObject({
      refundId: first.data.id,
      orderId: paid.orderId,
      amount: 1200,
      reason,
    });

    // The key is the operators', not the shopper's.
    const keyRow = await db().idempotencyKey.findFirstOrThrow({ where: { key } });
    expect([keyRow.accountId, keyRow.procedure]).toEqual([OPERATORS_ACCOUNT.id, "refunds.create"]);

    const order = await adminCaller(provider.client).admin.orders.get({ orderId: paid.orderId });
    expect(order.refunds).toEqual([expect.objectContaining({ id: first.data.id, amountMinor: 1200 })]);
    expect(order.payments[0]).toMatchObject({ refundedMinor: 1200, refundableMinor: paid.amount - 1200 });
    const shopper = await createCaller(contextFor(account)).orders.get({ id: paid.orderId });
    expect(shopper.refunds).toEqual([
      expect.objectContaining({ id: first.data.id, amountMinor: 1200, status: "succeeded" }),
    ]);
    expect(shopper.refundedMinor).toBe(1200);
    expect((await verifyLedger(db())).balanced).toBe(true);
  });

  it("the same key with another request is 422; a request in flight is 409 with Retry-After", async () => {
    const paid = await paidPayment(account, provider.client);
    const key = newKey();
    const slow = refund(key, { paymentId: paid.paymentId, amountMinor: 100, reason }, provider.client, {
      "x-provider-fault": "latency=800",
    });
    await new Promise((r) => setTimeout(r, 300));
    const during = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 100, reason },
      provider.client,
    );
    expect(during).toMatchObject({ ok: false, error: { code: "CONFLICT" } });
    expect(during.headers.get("retry-after")).toBe("1");
    expect(await slow).toMatchObject({ ok: true });
    const other = await refund(key, { paymentId: paid.paymentId, amountMinor: 101, reason }, provider.client);
    expect(other).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    if (!other.ok) expect(errorDetailsOf(other.error)?.details?.reason).toBeUndefined();
    expect(await refundBooks(paid.paymentId)).toMatchObject({ succeeded: 1, refunded: 100 });
  });

  it("beyond what is left to refund: 422 refund_exceeds_captured, stored and replayed; the rest still refunds", async () => {
    const paid = await paidPayment(account, provider.client);
    expect(
      await refund(
        newKey(),
        { paymentId: paid.paymentId, amountMinor: paid.amount - 500, reason },
        provider.client,
      ),
    ).toMatchObject({ ok: true });
    const key = newKey();
    const over = await refund(key, { paymentId: paid.paymentId, amountMinor: 501, reason }, provider.client);
    expect(over).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    if (over.ok) return;
    expect(errorDetailsOf(over.error)?.details).toMatchObject({
      reason: "refund_exceeds_captured",
      refundableMinor: 500,
      pendingMinor: 0,
    });
    expect(over.error.message).toContain("500 EUR");
    const replay = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 501, reason },
      provider.client,
    );
    expect(replay).toMatchObject({
      ok: false,
      error: { code: "UNPROCESSABLE_CONTENT", message: over.error.message },
    });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(
      await refund(newKey(), { paymentId: paid.paymentId, amountMinor: 500, reason }, provider.client),
    ).toMatchObject({ ok: true });
    expect(await refundBooks(paid.paymentId)).toMatchObject({
      succeeded: 2,
      refunded: paid.amount,
      failed: 0,
      pending: 0,
    });
  });

  it("beyond what is left only because another refund is pending: not stored, Retry-After; final once it settles", async () => {
    const paid = await paidPayment(account, provider.client);
    const slow = refund(
      newKey(),
      { paymentId: paid.paymentId, amountMinor: paid.amount - 1000, reason },
      provider.client,
      {
        "x-provider-fault": "latency=800",
      },
    );
    await new Promise((r) => setTimeout(r, 300));
    const key = newKey();
    const meanwhile = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 2000, reason },
      provider.client,
    );
    expect(meanwhile).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    expect(meanwhile.headers.get("retry-after")).toBe("1");
    if (!meanwhile.ok)
      expect(errorDetailsOf(meanwhile.error)?.details).toMatchObject({
        refundableMinor: 1000,
        pendingMinor: paid.amount - 1000,
      });
    expect(await slow).toMatchObject({ ok: true });
    await new Promise((r) => setTimeout(r, 1100));
    // Not stored: the same key is decided again, now for good.
    const after = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 2000, reason },
      provider.client,
    );
    expect(after).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    expect([after.headers.get("retry-after"), after.headers.get("idempotent-replayed")]).toEqual([
      null,
      null,
    ]);
    const replay = await refund(
      key,
      { paymentId: paid.paymentId, amountMinor: 2000, reason },
      provider.client,
    );
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("a payment that did not succeed is not refundable (422); an unknown payment is 404; both stored", async () => {
    const payment = await declinedPayment(account, provider.client);
    const refused = await refund(
      newKey(),
      { paymentId: payment.id, amountMinor: 100, reason },
      provider.client,
    );
    expect(refused).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    if (!refused.ok)
      expect(errorDetailsOf(refused.error)?.details).toMatchObject({
        reason: "payment_not_refundable",
        paymentStatus: "declined",
      });
    const missing = await refund(
      newKey(),
      { paymentId: "018f0000-0000-7000-8000-000000000000", amountMinor: 100, reason },
      provider.client,
    );
    expect(missing).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(await db().refund.count({ where: { paymentId: payment.id } })).toBe(0);
  });

  it("is for operators only: a shopper's API key is refused before anything is claimed", async () => {
    const paid = await paidPayment(account, provider.client);
    const key = newKey();
    const ctx = contextFor(account, { "idempotency-key": key }, provider.client);
    await expect(
      createCaller(ctx).admin.refunds.create({ paymentId: paid.paymentId, amountMinor: 1, reason }),
    ).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await db().idempotencyKey.count({ where: { key } })).toBe(0);
  });
});

describe("20 concurrent refunds of one payment with different keys", () => {
  it("never refund more than the capture: exactly what fits succeeds, the rest is refused", async () => {
    const paid = await paidPayment(account, provider.client);
    const each = 700;
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        refundUntilSettled(
          newKey(),
          { paymentId: paid.paymentId, amountMinor: each, reason },
          provider.client,
        ),
      ),
    );
    // Never a 5xx on the way, even one a retry would have hidden.
    expect(outcomes.flatMap((o) => o.seen).filter((code) => code === "INTERNAL_SERVER_ERROR")).toEqual([]);
    const fits = Math.floor(paid.amount / each);
    const succeeded = outcomes.filter((o) => o.ok);
    const refused = outcomes.filter((o) => !o.ok);
    expect(succeeded).toHaveLength(fits);
    expect(refused.map((o) => !o.ok && errorDetailsOf(o.error)?.details?.reason)).toEqual(
      Array(20 - fits).fill("refund_exceeds_captured"),
    );
    expect(await refundBooks(paid.paymentId)).toMatchObject({
      succeeded: fits,
      pending: 0,
      refunded: fits * each,
      reversals: fits,
      reversal_sum: fits * each,
      unbalanced: 0,
    });
    const charge = (await db().payment.findUniqueOrThrow({ where: { id: paid.paymentId } }))
      .providerChargeId as string;
    expect(await providerRefunds(provider.client, charge)).toMatchObject({ count: fits, sum: fits * each });
  });
});
