import { describe, expect } from "vitest";
import { db } from "../db";
import type { Refund } from "../provider";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { newKey } from "../test/payments";
import { paidPayment, refund } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { runReconciliation } from "./reconciler";
import { checkRefunds } from "./refunds";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("refund-recon");
});

const chargeOf = async (paymentId: string) =>
  (await db().payment.findUniqueOrThrow({ where: { id: paymentId } })).providerChargeId as string;
const recentWindow = () => new Date(Date.now() - 60_000);

describe("the reconciler compares refunds with the books", () => {
  it("reports a refund at the provider without postings, as an open mismatch until resolved", async () => {
    const paid = await paidPayment(account, provider.client);
    const charge = await chargeOf(paid.paymentId);
    // Made directly at the provider, as a person or a bug could.
    const behind = await provider.client.createRefund(
      { charge, amount: 700, metadata: { payment_id: paid.paymentId } },
      newKey(),
    );
    const report = await runReconciliation(
      { prisma: db(), provider: provider.client },
      { windowStart: recentWindow(), graceSeconds: 0 },
    );
    expect(report.providerError).toBeNull();
    expect(report.mismatches).toContainEqual(
      expect.objectContaining({
        kind: "refund_without_postings",
        paymentId: paid.paymentId,
        chargeId: behind.id,
      }),
    );
  });

  it("reports postings without a provider refund; a refund booked as made is no mismatch", async () => {
    const paid = await paidPayment(account, provider.client);
    const done = await refund(
      newKey(),
      { paymentId: paid.paymentId, amountMinor: 400, reason: "x" },
      provider.client,
    );
    if (!done.ok) throw done.error;
    const clean = await checkRefunds(
      { prisma: db(), provider: provider.client },
      {
        windowStart: recentWindow(),
        bookingCutoffMs: Date.now(),
        carriedPaymentIds: [],
        providerReachable: true,
      },
    );
    expect(clean.filter((m) => m.paymentId === paid.paymentId)).toEqual([]);
    // Our record now names a provider refund that does not exist.
    await db()
      .$executeRaw`UPDATE refunds SET provider_refund_id = ${`re_missing_${done.data.id}`} WHERE id = ${done.data.id}::uuid`;
    const found = await checkRefunds(
      { prisma: db(), provider: provider.client },
      {
        windowStart: recentWindow(),
        bookingCutoffMs: Date.now(),
        carriedPaymentIds: [],
        providerReachable: true,
      },
    );
    expect(
      found
        .filter((m) => m.paymentId === paid.paymentId)
        .map((m) => m.kind)
        .sort(),
    ).toEqual(["postings_without_refund", "refund_without_postings"]);
  });

  it("reports refunds beyond the charge at the provider", async () => {
    const paid = await paidPayment(account, provider.client);
    const done = await refund(
      newKey(),
      { paymentId: paid.paymentId, amountMinor: 400, reason: "x" },
      provider.client,
    );
    if (!done.ok) throw done.error;
    const charge = await chargeOf(paid.paymentId);
    const real: Refund[] = [];
    for await (const r of provider.client.listRefunds({ charge })) real.push(r);
    // A provider whose books disagree with its own limit: another refund of the whole charge.
    const overRefunding = {
      async *listRefunds(opts?: { charge?: string }) {
        for (const r of real) if (!opts?.charge || opts.charge === charge) yield r;
        if (!opts?.charge || opts.charge === charge)
          yield {
            ...(real[0] as (typeof real)[number]),
            id: `re_extra_${paid.paymentId}`,
            amount: paid.amount,
            metadata: {},
          };
      },
    };
    const found = await checkRefunds(
      { prisma: db(), provider: overRefunding },
      {
        windowStart: recentWindow(),
        bookingCutoffMs: Date.now(),
        carriedPaymentIds: [],
        providerReachable: true,
      },
    );
    expect(
      found
        .filter((m) => m.paymentId === paid.paymentId)
        .map((m) => m.kind)
        .sort(),
    ).toEqual(["refund_beyond_charge", "refund_without_postings"]);
  });
});
