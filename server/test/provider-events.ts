import { db } from "../db";
import type { ListedEvent, PaymentProvider } from "../provider";
import { createCaller } from "../root";
import { contextFor, type TestAccount } from "./fixtures";
import { callOutcome, createTestOrder, newKey } from "./payments";

/** A payment whose charge went through but whose answer was lost (the provider dropped it): pending. */
export async function paymentWithLostAnswer(account: TestAccount, provider: PaymentProvider) {
  const order = await createTestOrder(account);
  const ctx = contextFor(account, { "idempotency-key": newKey(), "x-provider-fault": "drop" }, provider);
  const lost = await callOutcome(ctx.resHeaders, () =>
    createCaller(ctx).payments.create({ orderId: order.id, paymentMethod: "pm_card_visa" }),
  );
  if (lost.ok) throw new Error("the dropped answer reached the caller");
  const row = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
  if (row.status !== "pending") throw new Error(`payment ${row.id} is ${row.status}, not pending`);
  return row;
}

/** The provider's own event of `type` for the payment, as its events list has it. */
export async function providerEvent(
  provider: PaymentProvider,
  paymentId: string,
  type: string,
): Promise<ListedEvent> {
  const since = new Date(Date.now() - 120_000);
  for await (const e of provider.listEvents({ createdGte: since, types: [type] })) {
    const object = e.data.object as { metadata?: Record<string, string> };
    if (object.metadata?.payment_id === paymentId) return e;
  }
  throw new Error(`no ${type} event for payment ${paymentId}`);
}

/** Ledger transactions that booked the payment's capture. */
export const bookings = (paymentId: string) =>
  db().ledgerTransaction.count({ where: { paymentId, kind: "payment_capture" } });
