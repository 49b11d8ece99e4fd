import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { type Db, db } from "../db";
import { errorDetailsOf } from "../errors";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { callOutcome, ledgerForOrder, newKey } from "../test/payments";
import { paidPayment, refund } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { createOrder } from "./orders";

let provider: TestProvider;
let shopper: TestAccount;
// Sorted after the demo catalogue, so a shop listing by SKU shows the demo products first.
const JOD_SKU = `ZZ-TEST-JOD-${randomUUID().slice(0, 8)}`;

it.beforeAll(async ({ provider: running }) => {
  provider = running;
  shopper = await createTestAccount("currencies");
  await db().product.create({
    data: { sku: JOD_SKU, name: "Test dinar item", priceMinor: 5120, currency: "JOD" },
  });
});
it.afterAll(async () => {
  await db().product.deleteMany({ where: { sku: JOD_SKU } });
});

const createOrderAs = (items: { sku: string; quantity: number }[]) =>
  callOutcome(new Headers(), () => createCaller(contextFor(shopper)).orders.create({ items }));

/** Creates a product only this transaction sees, orders it, and rolls back: no other test sees it. */
async function orderOfUnlistedProduct(product: { priceMinor: number; currency: string }) {
  const rollback = new Error("rollback");
  let outcome: unknown;
  await db()
    .$transaction(async (tx) => {
      const sku = `ZZ-TEST-${randomUUID().slice(0, 8)}`;
      await tx.product.create({ data: { sku, name: "Test item", ...product } });
      outcome = await createOrder(tx as unknown as Db, shopper.id, [{ sku, quantity: 1 }]).catch(
        (e: unknown) => e,
      );
      throw rollback;
    })
    .catch((e: unknown) => {
      if (e !== rollback) throw e;
    });
  return outcome;
}

describe("orders in the currencies Stripe defines", () => {
  it("an order in yen counts whole yen: priced, charged and booked in JPY", async () => {
    const order = await createTestOrder([{ sku: "TOWEL-IMABARI", quantity: 2 }]);
    expect(order).toMatchObject({
      currency: "JPY",
      total: 3600,
      items: [{ unitPrice: 1800, lineTotal: 3600 }],
    });
    const paid = await paidPayment(shopper, provider.client, [{ sku: "TOWEL-IMABARI", quantity: 2 }]);
    expect(paid.amount).toBe(3600);
    const legs = await db().ledgerEntry.findMany({ where: { paymentId: paid.paymentId } });
    expect(legs.map((l) => [l.currency, Number(l.amountMinor)]).sort()).toEqual([
      ["JPY", -3600],
      ["JPY", 3600],
    ]);
    expect(await ledgerForOrder(paid.orderId)).toEqual([expect.objectContaining({ entries: 2, sum: 0 })]);
  });

  it("items in two currencies are refused with a 400 that names them, and no order is made", async () => {
    const before = await db().order.count({ where: { accountId: shopper.id } });
    const mixed = await createOrderAs([
      { sku: "TEE-CLASSIC", quantity: 1 },
      { sku: "TOWEL-IMABARI", quantity: 1 },
    ]);
    expect(mixed).toMatchObject({ ok: false, error: { code: "BAD_REQUEST" } });
    if (mixed.ok) return;
    expect(mixed.error.message).toBe(
      "An order is in one currency; these items are in EUR and JPY: order them separately.",
    );
    expect(errorDetailsOf(mixed.error)?.details).toMatchObject({ currencies: ["EUR", "JPY"] });
    expect(await db().order.count({ where: { accountId: shopper.id } })).toBe(before);
  });

  it("a total below the currency's minimum charge is a 422 amount-invalid-for-currency", async () => {
    const refused = await orderOfUnlistedProduct({ priceMinor: 20, currency: "EUR" });
    expect(refused).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      message: "0.20 EUR is below the minimum charge of 0.50 EUR.",
    });
    expect(errorDetailsOf(refused as { cause?: unknown })?.details).toMatchObject({
      reason: "amount_invalid_for_currency",
      amountCode: "amount_too_small",
      minimumMinor: 50,
    });
    // The same price in yen is ¥20, below Stripe's ¥50.
    expect(await orderOfUnlistedProduct({ priceMinor: 20, currency: "JPY" })).toMatchObject({
      message: "20 JPY is below the minimum charge of 50 JPY.",
    });
    expect(await orderOfUnlistedProduct({ priceMinor: 50, currency: "JPY" })).toMatchObject({
      totalMinor: 50,
    });
  });

  it("a product in a code outside the table is never ordered", async () => {
    expect(await orderOfUnlistedProduct({ priceMinor: 5000, currency: "XYZ" })).toMatchObject({
      code: "BAD_REQUEST",
      message: "XYZ is not a supported currency.",
    });
  });
});

describe("refunds valid in their payment's currency", () => {
  it("a dinar refund must end in 0: 5.125 JOD is a 422, stored and replayed; 5.120 JOD refunds", async () => {
    const paid = await paidPayment(shopper, provider.client, [{ sku: JOD_SKU, quantity: 1 }]);
    expect(paid.amount).toBe(5120);
    const key = newKey();
    const input = { paymentId: paid.paymentId, amountMinor: 5125, reason: "test" };
    const odd = await refund(key, input, provider.client);
    expect(odd).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    if (odd.ok) return;
    expect(odd.error.message).toBe("JOD amounts must end in 0 in their third decimal: 5.125 JOD is not one.");
    expect(errorDetailsOf(odd.error)?.details).toMatchObject({
      reason: "amount_invalid_for_currency",
      amountCode: "amount_not_in_steps",
      currency: "JOD",
      stepMinor: 10,
    });
    const replay = await refund(key, input, provider.client);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay).toMatchObject({ ok: false, error: { message: odd.error.message } });
    expect(await db().refund.count({ where: { paymentId: paid.paymentId } })).toBe(0);

    const whole = await refund(newKey(), { ...input, amountMinor: 5120 }, provider.client);
    expect(whole).toMatchObject({
      ok: true,
      data: { amountMinor: 5120, currency: "JOD", status: "succeeded" },
    });
  });

  it("a refund below the minimum charge is still a refund (Stripe's minimum is for charges)", async () => {
    const paid = await paidPayment(shopper, provider.client);
    expect(
      await refund(newKey(), { paymentId: paid.paymentId, amountMinor: 1, reason: "test" }, provider.client),
    ).toMatchObject({
      ok: true,
      data: { amountMinor: 1, currency: "EUR" },
    });
  });
});

function createTestOrder(items: { sku: string; quantity: number }[]) {
  return createCaller(contextFor(shopper)).orders.create({ items });
}
