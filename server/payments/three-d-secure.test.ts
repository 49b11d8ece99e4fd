import { describe, expect } from "vitest";
import { db } from "../db";
import { errorDetailsOf } from "../errors";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { callOutcome, createTestOrder, newKey } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";
import { payment as paymentOperation } from "./operation";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("three_d_secure");
});

const RETURN_URL = "http://127.0.0.1:3999/checkout";

function pay(key: string, orderId: string, extra: { captureMethod?: "manual" } = {}) {
  const ctx = contextFor(account, { "idempotency-key": key }, provider.client);
  return callOutcome(ctx.resHeaders, () =>
    createCaller(ctx).payments.create({
      orderId,
      paymentMethod: "pm_card_authenticationRequired",
      returnUrl: RETURN_URL,
      ...extra,
    }),
  );
}

/** The shopper's press on the simulator's challenge page; where the browser is sent back. */
async function challenge(url: string, action: "complete" | "fail") {
  const res = await fetch(url, {
    method: "POST",
    body: new URLSearchParams({ action }),
    redirect: "manual",
  });
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location") ?? "");
}

describe("a card that asks for 3-D Secure", () => {
  it("answers requires_action (not stored), then the outcome to the same key once the shopper completed it", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const first = await pay(key, order.id);
    if (!first.ok) throw first.error;
    expect(first.data).toMatchObject({ status: "requires_action", nextAction: { type: "redirect_to_url" } });
    const url = first.data.nextAction?.url ?? "";

    // A reload or a double press before the shopper finished: the same answer, nothing stored.
    await new Promise((r) => setTimeout(r, 1100));
    const again = await pay(key, order.id);
    expect(again).toMatchObject({ ok: true, data: { status: "requires_action", id: first.data.id } });
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    // A second tab's key on the same order is told the order is taken, and to ask again.
    const other = await pay(newKey(), order.id);
    expect(other.ok).toBe(false);
    if (!other.ok)
      expect(errorDetailsOf(other.error)?.details).toMatchObject({ reason: "order_already_paid" });

    const back = await challenge(url, "complete");
    expect(back.searchParams.get("redirect_status")).toBe("succeeded");
    await new Promise((r) => setTimeout(r, 1100));
    const done = await pay(key, order.id);
    expect(done).toMatchObject({
      ok: true,
      data: { status: "succeeded", id: first.data.id, nextAction: null },
    });
    const replay = await pay(key, order.id);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await db().payment.count({ where: { orderId: order.id } })).toBe(1);
    expect((await db().order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe("paid");
  });

  it("a shopper who completes the step and never comes back: the completer settles it, once", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const first = await pay(key, order.id);
    if (!first.ok) throw first.error;
    const deps = { prisma: db(), provider: provider.client };
    const drive = () => paymentOperation.complete(deps, { backoff: { idleSeconds: 0, maxSeconds: 1 } });
    // Still awaiting the shopper: the completer's pass leaves the key unfinished, nothing stored.
    await new Promise((r) => setTimeout(r, 1100));
    await drive();
    const keyRow = () =>
      db().idempotencyKey.findUniqueOrThrow({ where: { accountId_key: { accountId: account.id, key } } });
    expect((await keyRow()).state).toBe("in_progress");

    await challenge(first.data.nextAction?.url ?? "", "complete");
    for (let pass = 0; pass < 20 && (await keyRow()).state !== "completed"; pass++) {
      await new Promise((r) => setTimeout(r, 600));
      await drive();
    }
    expect((await keyRow()).state).toBe("completed");
    const row = await db().payment.findUniqueOrThrow({ where: { id: first.data.id } });
    expect(row.status).toBe("succeeded");
    const later = await pay(key, order.id);
    expect(later).toMatchObject({ ok: true, data: { status: "succeeded" } });
    expect(later.headers.get("idempotent-replayed")).toBe("true");
  });

  it("a failed step is a decline: nothing charged, the order payable again", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const first = await pay(key, order.id);
    if (!first.ok) throw first.error;
    await challenge(first.data.nextAction?.url ?? "", "fail");
    await new Promise((r) => setTimeout(r, 1100));
    const done = await pay(key, order.id);
    expect(done.ok).toBe(false);
    if (!done.ok) {
      expect(done.error.code).toBe("PAYMENT_REQUIRED");
      expect(errorDetailsOf(done.error)?.details).toMatchObject({
        declineCode: "payment_intent_authentication_failure",
      });
    }
    const row = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
    expect(row.status).toBe("declined");
  });

  it("completed with a manual capture: authorized", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const first = await pay(key, order.id, { captureMethod: "manual" });
    if (!first.ok) throw first.error;
    await challenge(first.data.nextAction?.url ?? "", "complete");
    await new Promise((r) => setTimeout(r, 1100));
    const done = await pay(key, order.id, { captureMethod: "manual" });
    expect(done).toMatchObject({ ok: true, data: { status: "authorized", amountCaptured: 0 } });
  });

  it("abandoned past its time: canceled at the provider, then the shopper is told, and the order is payable", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const first = await pay(key, order.id);
    if (!first.ok) throw first.error;
    await db()
      .$executeRaw`UPDATE payments SET created_at = now() - interval '1 day' WHERE id = ${first.data.id}::uuid`;
    await new Promise((r) => setTimeout(r, 1100));
    const done = await pay(key, order.id);
    expect(done.ok).toBe(false);
    if (!done.ok) {
      expect(errorDetailsOf(done.error)?.details).toMatchObject({
        reason: "payment_canceled",
        cancellationReason: "abandoned",
      });
    }
    const charge = await provider.client.getCharge(first.data.providerChargeId ?? "");
    expect(charge?.status).toBe("canceled");
    // The challenge is over: completing it now takes nothing.
    const late = await fetch(first.data.nextAction?.url ?? "", {
      method: "POST",
      body: new URLSearchParams({ action: "complete" }),
      redirect: "manual",
    });
    expect(late.status).toBeLessThan(500);
    expect((await provider.client.getCharge(first.data.providerChargeId ?? ""))?.status).toBe("canceled");
    const repaid = await callOutcome(new Headers(), () =>
      createCaller(contextFor(account, { "idempotency-key": newKey() }, provider.client)).payments.create({
        orderId: order.id,
        paymentMethod: "pm_card_visa",
      }),
    );
    expect(repaid).toMatchObject({ ok: true, data: { status: "succeeded" } });
  });
});
