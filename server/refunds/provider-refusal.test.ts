import { describe, expect } from "vitest";
import { db } from "../db";
import { errorDetailsOf } from "../errors";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { newKey } from "../test/payments";
import { paidPayment, refund } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("provider-refusal");
});

describe("a refund the provider refuses as larger than the charge's rest (issue 36, false answer 3)", () => {
  it("is answered and stored with the provider's figures, not our books'", async () => {
    const paid = await paidPayment(account, provider.client);
    const { providerChargeId } = await db().payment.findUniqueOrThrow({ where: { id: paid.paymentId } });
    // Refunded at the provider behind our back: its rest is smaller than our books say.
    await provider.client.createRefund({ charge: providerChargeId as string, amount: 700 }, newKey());
    const providerRest = paid.amount - 700;

    const key = newKey();
    const input = { paymentId: paid.paymentId, amountMinor: paid.amount - 100, reason: "rest" };
    const refused = await refund(key, input, provider.client);
    expect(refused).toMatchObject({ ok: false, error: { code: "UNPROCESSABLE_CONTENT" } });
    if (refused.ok) return;
    expect(errorDetailsOf(refused.error)?.details).toMatchObject({
      reason: "refund_exceeds_captured",
      amountMinor: paid.amount - 100,
      refundableMinor: providerRest,
      pendingMinor: 0,
      currency: "EUR",
    });
    expect(refused.error.message).toContain(`${providerRest} EUR`);

    const replay = await refund(key, input, provider.client);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay).toMatchObject({ ok: false, error: { message: refused.error.message } });
    if (!replay.ok)
      expect(errorDetailsOf(replay.error)?.details).toMatchObject({ refundableMinor: providerRest });
    const row = await db().refund.findFirstOrThrow({ where: { paymentId: paid.paymentId } });
    expect(row).toMatchObject({ status: "failed", failureCode: "amount_too_large" });
  });
});
