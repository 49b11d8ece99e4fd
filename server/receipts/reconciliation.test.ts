import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { db } from "../db";
import { paymentMessageId } from "../outbox/events";
import { runReconciliation } from "../reconciler";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("owed");
});

/** A settled payment as the database would hold it, settled `minutesAgo` (no ledger, no charge). */
async function plantPayment(status: "succeeded" | "declined", minutesAgo: number) {
  const order = await createTestOrder(account);
  const id = randomUUID();
  await db().$executeRaw`
    INSERT INTO payments (id, order_id, account_id, amount_minor, currency, payment_method, provider_key, status, provider_charge_id, updated_at)
    VALUES (${id}::uuid, ${order.id}::uuid, ${account.id}::uuid, ${order.total}, ${order.currency}, 'pm_card_visa',
            ${`planted_${id}`}, ${status}, ${`ch_planted_${id.slice(0, 8)}`}, now() - make_interval(mins => ${minutesAgo}::int))`;
  return { id, order };
}

it("reports a succeeded payment still without a receipt after the grace period, and nothing else", async () => {
  const windowStart = new Date(Date.now() - 1000);
  const owed = await plantPayment("succeeded", 10);
  const receipted = await plantPayment("succeeded", 10);
  await db().receipt.create({
    data: {
      number: `R-2026-9${Math.floor(Math.random() * 1e8)}`,
      orderId: receipted.order.id,
      paymentId: receipted.id,
      messageId: paymentMessageId("payment.succeeded", receipted.id),
      lines: receipted.order.items,
      totalMinor: receipted.order.total,
      currency: receipted.order.currency,
    },
  });
  const recent = await plantPayment("succeeded", 0);
  const declined = await plantPayment("declined", 10);

  const report = await runReconciliation({ prisma: db(), provider: provider.client }, { windowStart });
  const kinds = (id: string) => report.mismatches.filter((m) => m.paymentId === id).map((m) => m.kind);
  expect(kinds(owed.id)).toEqual(["succeeded_without_receipt"]);
  expect(kinds(receipted.id)).toEqual([]);
  expect(kinds(recent.id)).toEqual([]);
  expect(kinds(declined.id)).toEqual([]);

  const strict = await runReconciliation(
    { prisma: db(), provider: provider.client },
    { windowStart, receiptGraceSeconds: 0 },
  );
  expect(strict.mismatches.filter((m) => m.paymentId === recent.id).map((m) => m.kind)).toEqual([
    "succeeded_without_receipt",
  ]);
});
