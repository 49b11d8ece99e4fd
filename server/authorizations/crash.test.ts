import { describe, expect } from "vitest";
import { db } from "../db";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder, newKey } from "../test/payments";
import { startWorkerProcess } from "../test/processes";
import { it, type TestProvider } from "../test/vitest";
import { expireAuthorizations } from "./expiry";
import { cancel } from "./operations";

/**
 * A worker killed with SIGKILL in the middle of an authorization's expiry: right after the cancel
 * is recorded (phase 1), and right after the provider canceled (phase 2) but before the books.
 * The next pass (or the cancel's completer) finishes it: the provider canceled once, one hold
 * voided, the payment canceled as expired.
 */
const CRASH_POINTS = ["after_cancel_created", "after_provider_cancel"] as const;

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("expiry-crash");
});

async function dueAuthorization() {
  const order = await createTestOrder(account);
  const ctx = contextFor(account, { "idempotency-key": newKey() }, provider.client);
  const payment = await createCaller(ctx).payments.create({
    orderId: order.id,
    paymentMethod: "pm_card_visa",
    captureMethod: "manual",
  });
  await db()
    .$executeRaw`UPDATE payments SET capture_before = now() - interval '1 second' WHERE id = ${payment.id}::uuid`;
  return payment;
}

describe("an authorization's expiry across a SIGKILL", () => {
  for (const point of CRASH_POINTS) {
    it(`killed ${point}: finished once by the next pass`, { timeout: 90_000 }, async () => {
      const payment = await dueAuthorization();
      const doomed = await startWorkerProcess({
        PAYMENT_PROVIDER_URL: provider.url,
        PAYMENT_LEASE_SECONDS: "2",
        CHECKOUT_FAILPOINTS: point,
      });
      // Its expiry pass reaches the point on this payment or another one due: either way it dies.
      expect(await doomed.exited).toBe("SIGKILL");

      const deps = { prisma: db(), provider: provider.client };
      for (let pass = 0; pass < 40; pass++) {
        const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
        if (row.status !== "authorized") break;
        await expireAuthorizations(deps);
        await cancel.complete(deps, { backoff: { idleSeconds: 0, maxSeconds: 1 } });
        await new Promise((r) => setTimeout(r, 500));
      }
      const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(row).toMatchObject({ status: "canceled", failureCode: "expired", captureBefore: null });
      const actions = await db().authorizationAction.findMany({ where: { paymentId: payment.id } });
      expect(actions.map((a) => [a.kind, a.status])).toEqual([["cancel", "succeeded"]]);
      const kinds = await db().ledgerTransaction.findMany({
        where: { paymentId: payment.id },
        select: { kind: true },
        orderBy: { kind: "asc" },
      });
      expect(kinds.map((k) => k.kind)).toEqual(["authorization_hold", "hold_voided"]);
      expect((await provider.client.getCharge(payment.providerChargeId ?? ""))?.status).toBe("canceled");
    });
  }
});
