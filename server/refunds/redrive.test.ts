import { describe, expect } from "vitest";
import { db } from "../db";
import { httpProvider } from "../provider";
import { adminCaller } from "../test/admin";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { closedPort } from "../test/network";
import { newKey } from "../test/payments";
import { paidPayment, refund, refundBooks } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { OPERATORS_ACCOUNT } from "./operators";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("refund-redrive");
});

describe("a refund key in the admin", () => {
  it("an unfinished refund key shows its refund and payment, and the operator's re-drive finishes it", async () => {
    const paid = await paidPayment(account, provider.client);
    const key = newKey();
    const down = httpProvider({ baseUrl: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 2000 });
    const failed = await refund(key, { paymentId: paid.paymentId, amountMinor: 250, reason: "late" }, down);
    expect(failed).toMatchObject({ ok: false, error: { code: "SERVICE_UNAVAILABLE" } });
    // The request provably never left (connection refused): its mark is taken back.
    const pending = await db().refund.findFirstOrThrow({ where: { paymentId: paid.paymentId } });
    expect([pending.status, pending.refundRequestedAt]).toEqual(["pending", null]);

    const admin = adminCaller(provider.client).admin;
    const row = await db().idempotencyKey.findUniqueOrThrow({
      where: { accountId_key: { accountId: OPERATORS_ACCOUNT.id, key } },
    });
    const detail = await admin.keys.get({ id: String(row.id) });
    expect(detail).toMatchObject({
      procedure: "refunds.create",
      accountHandle: "operators",
      state: "abandoned",
      refund: { id: pending.id, amountMinor: 250, status: "pending" },
      payment: { id: paid.paymentId, refundedMinor: 0, refundableMinor: paid.amount - 250 },
    });
    const listed = await admin.keys.list({ accountHandle: "operators", search: key });
    expect(listed.items.map((k) => k.procedure)).toEqual(["refunds.create"]);

    const redriven = await admin.keys.redrive({ id: String(row.id) });
    expect(redriven.outcome).toBe("settled");
    expect(redriven.key).toMatchObject({ state: "completed", refund: { status: "succeeded" } });
    expect(await refundBooks(paid.paymentId)).toMatchObject({
      succeeded: 1,
      reversals: 1,
      reversal_sum: 250,
    });
  });
});
