import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { adminCaller } from "../test/admin";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder, newKey, pay } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";

let provider: TestProvider;
let alice: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  alice = await createTestAccount("trail");
});

const sum = (entries: { amountMinor: number }[]) => entries.reduce((s, e) => s + e.amountMinor, 0);

describe("a double-clicked payment, seen from the admin", () => {
  it("shows one completed key with its response, its charge, one ledger transaction and its history", async () => {
    const order = await createTestOrder(alice, [{ sku: "TEE-CLASSIC", quantity: 1 }]);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const outcomes = await Promise.all([
      pay(alice, key, input, provider.client),
      pay(alice, key, input, provider.client),
    ]);
    const paid = outcomes.find((o) => o.ok);
    if (!paid?.ok) throw new Error("neither request was answered with the payment");

    const admin = adminCaller(provider.client);
    const detail = await admin.admin.keys.get({ accountId: alice.id, key });
    expect(detail).toMatchObject({
      state: "completed",
      procedure: "payments.create",
      responseStatus: 200,
      responseBody: { data: { id: paid.data.id, status: "succeeded" } },
      requestParams: input,
      accountHandle: alice.handle,
    });
    expect(detail.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(detail.events.map((e) => e.kind)).toEqual(["claimed", "progressed", "completed"]);
    expect(detail.payment).toMatchObject({
      id: paid.data.id,
      status: "succeeded",
      amountMinor: 2500,
      currency: "EUR",
      idempotencyKeyId: detail.id,
      charge: {
        state: "found",
        charge: { id: paid.data.providerChargeId, amount: 2500, status: "succeeded" },
      },
    });
    expect(detail.payment?.ledgerTransactions).toHaveLength(1);
    const entries = detail.payment?.ledgerTransactions[0]?.entries ?? [];
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(sum(entries)).toBe(0);

    const orderView = await admin.admin.orders.get({ orderId: order.id });
    expect(orderView).toMatchObject({
      id: order.id,
      status: "paid",
      totalMinor: 2500,
      accountHandle: alice.handle,
    });
    expect(orderView.payments).toHaveLength(1);
    expect(orderView.payments[0]?.ledgerTransactions).toHaveLength(1);
    expect(orderView.payments[0]?.charge.state).toBe("found");
    expect(orderView.items).toEqual([
      {
        sku: "TEE-CLASSIC",
        name: expect.any(String),
        unitPriceMinor: 2500,
        quantity: 1,
        lineTotalMinor: 2500,
      },
    ]);
  });

  it("shows a charge the provider cannot be asked about as unavailable, not as an error", async () => {
    const order = await createTestOrder(alice, [{ sku: "MUG-ENAMEL", quantity: 1 }]);
    const paid = await pay(
      alice,
      newKey(),
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(paid.ok).toBe(true);
    const down = {
      ...provider.client,
      getCharge: () => Promise.reject(new Error("connection refused")),
    };
    const view = await adminCaller(down).admin.orders.get({ orderId: order.id });
    expect(view.payments[0]?.charge).toMatchObject({ state: "unavailable", message: "connection refused" });
    await expect(adminCaller().admin.orders.get({ orderId: randomUUID() })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});

describe("admin.ledger", () => {
  it("verify says the books balance", async () => {
    const admin = adminCaller();
    expect(await admin.admin.ledger.verify()).toMatchObject({ balanced: true, unbalancedTransactions: [] });
  });

  it("lists recent transactions with balanced entries, and the balances", async () => {
    const admin = adminCaller();
    const recent = await admin.admin.ledger.transactions({ limit: 5 });
    expect(recent.length).toBeGreaterThan(0);
    for (const t of recent) expect(sum(t.entries)).toBe(0);
    const balances = await admin.admin.ledger.balances();
    expect(balances.length).toBeGreaterThan(0);
  });
});

describe("admin.reconcile", () => {
  it("runs the reconciler now and serves its report as the latest", async () => {
    const admin = adminCaller(provider.client);
    const report = await admin.admin.reconcile.run({ graceSeconds: 0 });
    expect(report.paymentsChecked).toBeGreaterThan(0);
    expect(report.finishedAt).not.toBeNull();
    expect(await admin.admin.reconcile.latest()).toEqual(report);
  });
});
