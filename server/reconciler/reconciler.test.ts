import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { db } from "../db";
import { postPaymentCapture } from "../ledger";
import { createRegistry } from "../metrics/registry";
import { refreshDatabaseGauges } from "../metrics/scrape";
import { httpProvider } from "../provider";
import { adminCaller } from "../test/admin";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { closedPort } from "../test/network";
import { createTestOrder, newKey, pay, payMany, startTestProvider } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";
import { CHARGE_SOURCE, runReconciliation } from "./reconciler";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("recon");
});

async function plantSucceededPayment(chargeId: string, amount: number) {
  const order = await createTestOrder(account);
  const id = randomUUID();
  await db().$transaction(async (tx) => {
    await tx.$executeRaw`
      INSERT INTO payments (id, order_id, account_id, amount_minor, currency, payment_method, provider_key, status, provider_charge_id)
      VALUES (${id}::uuid, ${order.id}::uuid, ${account.id}::uuid, ${amount}, 'EUR', 'pm_card_visa', ${`planted_${id}`}, 'succeeded', ${chargeId})`;
    await postPaymentCapture(tx, {
      paymentId: id,
      amountMinor: amount,
      currency: "EUR",
      description: "planted",
    });
  });
  return id;
}

/** A paid order, then a second charge made behind our back that names the booked payment. */
async function paidThenChargedAgain() {
  const order = await createTestOrder(account);
  const paid = await pay(
    account,
    newKey(),
    { orderId: order.id, paymentMethod: "pm_card_visa" },
    provider.client,
  );
  if (!paid.ok) throw paid.error;
  // Made directly at the provider, as a bug or a person could.
  const second = await provider.client.createCharge(
    {
      amount: paid.data.amount,
      currency: paid.data.currency,
      paymentMethod: "pm_card_visa",
      metadata: { payment_id: paid.data.id, order_id: order.id },
    },
    newKey(),
  );
  return { paid: paid.data, second };
}

describe("the reconciler", () => {
  it("reports mismatches planted directly in the database", async () => {
    const windowStart = new Date(Date.now() - 1000);
    // Postings for a charge the provider never made.
    const ghost = await plantSucceededPayment(`ch_ghost_${randomUUID().slice(0, 8)}`, 900);
    // A real charge of 1500 booked as 1400.
    const realId = randomUUID();
    const charge = await provider.client.createCharge(
      {
        amount: 1500,
        currency: "EUR",
        paymentMethod: "pm_card_visa",
        metadata: { source: CHARGE_SOURCE, payment_id: realId },
      },
      newKey(),
    );
    const wrongAmount = await plantSucceededPayment(charge.id, 1400);
    // A charge tagged as ours that names no payment of ours: money taken for nothing.
    const orphan = await provider.client.createCharge(
      {
        amount: 700,
        currency: "EUR",
        paymentMethod: "pm_card_visa",
        metadata: { source: CHARGE_SOURCE, payment_id: randomUUID() },
      },
      newKey(),
    );

    const report = await runReconciliation(
      { prisma: db(), provider: provider.client },
      { windowStart, graceSeconds: 0 },
    );
    const kinds = (id: string | null) =>
      report.mismatches.filter((m) => m.paymentId === id || m.chargeId === id).map((m) => m.kind);
    expect(kinds(ghost)).toEqual(["postings_without_charge"]);
    expect(kinds(wrongAmount)).toEqual(["amount_mismatch"]);
    expect(kinds(orphan.id)).toEqual(["duplicate_charge"]);
    const stored = await db().reconciliationRun.findUniqueOrThrow({ where: { id: report.id } });
    expect((stored.mismatches as unknown[]).length).toBe(report.mismatches.length);
  });

  it("finds nothing to report after 200 payments with random provider faults and client retries", async () => {
    const faulty = await startTestProvider({ PROVIDER_FAULTS: "error:0.1,drop:0.1,latency:0-40" });
    try {
      const windowStart = new Date(Date.now() - 1000);
      // Ten clients at a time, each retrying its key until the payment settles.
      const settled = await payMany(account, faulty.client, { count: 200, concurrency: 10 });
      const outcomes = new Map(settled.map((o) => [o.orderId, o.outcome]));
      expect([...outcomes.values()].filter((o) => o === "succeeded")).toHaveLength(150);

      // Every order: exactly one charge at the provider; a balanced booking for each success only.
      const chargesByOrder = new Map<string, number>();
      for await (const c of faulty.client.listCharges({ createdGte: windowStart })) {
        const orderId = c.metadata.order_id ?? "";
        if (outcomes.has(orderId)) chargesByOrder.set(orderId, (chargesByOrder.get(orderId) ?? 0) + 1);
      }
      const bookings = await db().$queryRaw<{ order_id: string; transactions: number; sum: number }[]>`
        SELECT p.order_id::text, count(DISTINCT t.id)::int AS transactions, coalesce(sum(e.amount_minor), 0)::int AS sum
          FROM payments p LEFT JOIN ledger_transactions t ON t.payment_id = p.id LEFT JOIN ledger_entries e ON e.transaction_id = t.id
         WHERE p.order_id = ANY(${[...outcomes.keys()]}::uuid[]) GROUP BY p.order_id`;
      const booked = new Map(bookings.map((b) => [b.order_id, b]));
      for (const [orderId, outcome] of outcomes) {
        expect(chargesByOrder.get(orderId)).toBe(1);
        expect(booked.get(orderId)).toMatchObject({ transactions: outcome === "succeeded" ? 1 : 0, sum: 0 });
      }

      const report = await runReconciliation(
        { prisma: db(), provider: faulty.client },
        { windowStart, graceSeconds: 0 },
      );
      const paymentIds = new Set(
        (
          await db().payment.findMany({
            where: { orderId: { in: [...outcomes.keys()] } },
            select: { id: true },
          })
        ).map((p) => p.id),
      );
      expect(report.chargesChecked).toBeGreaterThanOrEqual(200);
      expect(report.mismatches.filter((m) => m.paymentId !== null && paymentIds.has(m.paymentId))).toEqual(
        [],
      );
    } finally {
      await faulty.stop();
    }
  }, 180_000);

  it("reports a second charge for a booked payment as a duplicate, with both charge ids", async () => {
    const { paid, second } = await paidThenChargedAgain();
    const report = await runReconciliation({ prisma: db(), provider: provider.client }, { graceSeconds: 0 });
    expect(report.mismatches.filter((m) => m.paymentId === paid.id)).toEqual([
      expect.objectContaining({
        kind: "duplicate_charge",
        chargeId: second.id,
        bookedChargeId: paid.providerChargeId,
      }),
    ]);
  });

  it("keeps reporting what is unfinished however old, and reports our side when the provider is down", async () => {
    const order = await createTestOrder(account);
    const id = randomUUID();
    await db().$executeRaw`
      INSERT INTO payments (id, order_id, account_id, amount_minor, currency, payment_method, provider_key, created_at, updated_at)
      VALUES (${id}::uuid, ${order.id}::uuid, ${account.id}::uuid, 1000, 'EUR', 'pm_card_visa', ${`aged_${id}`},
              now() - interval '2 days', now() - interval '2 days')`;
    const down = httpProvider({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2000 });
    const report = await runReconciliation({ prisma: db(), provider: down });
    expect(report.providerError).toMatch(/unreachable/);
    expect(report.mismatches.filter((m) => m.paymentId === id).map((m) => m.kind)).toEqual([
      "stale_pending_payment",
    ]);
    const withProvider = await runReconciliation({ prisma: db(), provider: provider.client });
    expect(withProvider.providerError).toBeNull();
    expect(
      withProvider.mismatches.some((m) => m.paymentId === id && m.kind === "stale_pending_payment"),
    ).toBe(true);
  });

  it("never forgets an open mismatch after a run that could not reach the provider", async () => {
    const { second } = await paidThenChargedAgain();
    const isIt = (m: { kind: string; chargeId: string | null }) =>
      m.kind === "duplicate_charge" && m.chargeId === second.id;
    const healthy = { prisma: db(), provider: provider.client };
    expect((await runReconciliation(healthy, { graceSeconds: 0 })).mismatches.some(isIt)).toBe(true);

    // One instance's run cannot list the provider: what another run found stays open and counted.
    const down = httpProvider({ baseUrl: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 2000 });
    const blind = await runReconciliation({ prisma: db(), provider: down }, { graceSeconds: 0 });
    expect(blind.providerError).toMatch(/unreachable/);
    expect(blind.mismatches.some(isIt)).toBe(true);
    const m = createRegistry();
    await refreshDatabaseGauges(db(), m);
    expect((await m.reconciliation.get()).values[0]?.value).toBe(blind.mismatches.length);
    expect((await m.reconciliationProviderError.get()).values[0]?.value).toBe(1);

    // The next healthy run lists a window that no longer holds the charge: still reported. (Stripe
    // counts `created` in whole seconds: a window from this second could still hold it.)
    const nextSecond = () => new Date(Date.now() + 1000);
    const later = await runReconciliation(healthy, { graceSeconds: 0, windowStart: nextSecond() });
    expect(later.mismatches.filter(isIt)).toHaveLength(1);

    // Until an operator resolves it, recorded.
    const open = later.mismatches.find(isIt);
    await adminCaller(provider.client).admin.reconcile.resolve({
      id: open?.id ?? "",
      note: "refunded by hand",
    });
    const after = await runReconciliation(healthy, { graceSeconds: 0, windowStart: nextSecond() });
    expect(after.mismatches.some(isIt)).toBe(false);
    const row = await db().reconciliationMismatch.findUniqueOrThrow({
      where: { id: BigInt(open?.id ?? "0") },
    });
    expect([row.resolvedBy, row.resolution]).toEqual(["operator:admin", "refunded by hand"]);
  });

  it("carries a mismatch older than its window into the next report until it is resolved", async () => {
    const ghost = await plantSucceededPayment(`ch_ghost_${randomUUID().slice(0, 8)}`, 300);
    const deps = { prisma: db(), provider: provider.client };
    const first = await runReconciliation(deps, { graceSeconds: 0 });
    expect(first.mismatches.some((m) => m.paymentId === ghost)).toBe(true);
    await db()
      .$executeRaw`UPDATE payments SET created_at = now() - interval '3 days' WHERE id = ${ghost}::uuid`;
    const later = await runReconciliation(deps, { graceSeconds: 0 });
    expect(later.mismatches.filter((m) => m.paymentId === ghost).map((m) => m.kind)).toEqual([
      "postings_without_charge",
    ]);
  });
});
