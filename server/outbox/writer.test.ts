import { describe, expect } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { waitFor } from "../test/messaging/queue";
import { createTestOrder, ledgerForOrder, newKey, pay } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";
import { paymentMessageId, ZPaymentDeclined, ZPaymentSucceeded } from "./events";

/**
 * Phase 3 writes the payment's event to the outbox on the transaction that books it: the event
 * exists exactly when the booking does, under an id derived from the payment and the event.
 */
let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("outbox");
});

const eventsForOrder = (orderId: string) =>
  db().outboxMessage.findMany({ where: { payload: { path: ["orderId"], equals: orderId } } });

describe("the outbox row of a payment", () => {
  it("a success writes one payment.succeeded with the order's lines; its replay writes nothing", async () => {
    const order = await createTestOrder(account, [
      { sku: "TEE-CLASSIC", quantity: 2 },
      { sku: "SOCKS-WOOL", quantity: 1 },
    ]);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const first = await pay(account, key, input, provider.client);
    if (!first.ok) throw first.error;
    await pay(account, key, input, provider.client);

    const events = await eventsForOrder(order.id);
    expect(events.map((e) => [e.id, e.topic, e.sentAt])).toEqual([
      [`${first.data.id}:payment.succeeded`, "payment.succeeded", null],
    ]);
    expect(events[0]?.id).toBe(paymentMessageId("payment.succeeded", first.data.id));
    const payload = ZPaymentSucceeded.parse(events[0]?.payload);
    expect(payload).toMatchObject({
      paymentId: first.data.id,
      orderId: order.id,
      accountId: account.id,
      amount: order.total,
      currency: order.currency,
      providerChargeId: first.data.providerChargeId,
    });
    expect(payload.lines).toEqual(
      order.items.map((i) => ({
        sku: i.sku,
        name: i.name,
        unitPrice: i.unitPrice,
        quantity: i.quantity,
        lineTotal: i.lineTotal,
      })),
    );
  });

  it("a decline writes one payment.declined and no payment.succeeded", async () => {
    const order = await createTestOrder(account);
    const declined = await pay(
      account,
      newKey(),
      { orderId: order.id, paymentMethod: "pm_card_declined" },
      provider.client,
    );
    expect(declined.ok).toBe(false);
    const payment = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
    expect(payment.status).toBe("declined");
    const events = await eventsForOrder(order.id);
    expect(events.map((e) => e.id)).toEqual([paymentMessageId("payment.declined", payment.id)]);
    expect(ZPaymentDeclined.parse(events[0]?.payload).failureCode).toBe(payment.failureCode);
  });

  it("no booking without its event: when the event cannot be written, the booking rolls back too", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_slow" };
    // The slow card leaves time to learn the payment's id during phase 2 and take its message id.
    const attempt = pay(account, key, input, provider.client);
    const payment = await waitFor("the pending payment", () =>
      db().payment.findFirst({ where: { orderId: order.id } }),
    );
    const messageId = paymentMessageId("payment.succeeded", payment.id);
    // Marked sent, so no relay publishes the obstacle.
    await db().outboxMessage.create({
      data: { id: messageId, topic: "payment.succeeded", payload: {}, sentAt: new Date() },
    });

    const failed = await attempt;
    expect(failed.ok).toBe(false);
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe("pending");
    expect(await ledgerForOrder(order.id)).toEqual([]);
    expect((await db().order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe("pending_payment");

    // Without the obstacle, the retry with the same key books the payment and its event together.
    await db().outboxMessage.delete({ where: { id: messageId } });
    const retried = await pay(account, key, input, provider.client);
    expect(retried.ok).toBe(true);
    expect(await ledgerForOrder(order.id)).toHaveLength(1);
    const events = await eventsForOrder(order.id);
    expect(events.map((e) => e.id)).toEqual([messageId]);
    expect(ZPaymentSucceeded.safeParse(events[0]?.payload).success).toBe(true);
  });

  it("no event without its booking: a phase 3 fenced out by a takeover commits neither", async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const attempt = pay(account, key, { orderId: order.id, paymentMethod: "pm_card_slow" }, provider.client);
    const payment = await waitFor("the pending payment", () =>
      db().payment.findFirst({ where: { orderId: order.id } }),
    );
    // Another attempt takes the key over while this one waits for the provider.
    await db().idempotencyKey.updateMany({
      where: { accountId: account.id, key },
      data: { fence: { increment: 1 } },
    });

    expect((await attempt).ok).toBe(false);
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe("pending");
    expect(await ledgerForOrder(order.id)).toEqual([]);
    expect(await eventsForOrder(order.id)).toEqual([]);
  });
});
