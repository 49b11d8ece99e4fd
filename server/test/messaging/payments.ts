import { db } from "../../db";
import { paymentMessageId, type TEnvelope, type TTopic } from "../../outbox/events";
import type { PaymentProvider } from "../../provider";
import type { TestAccount } from "../fixtures";
import { createTestOrder, newKey, payUntilSettled } from "../payments";

/** A payment taken to the end in-process; its event is then pending in the outbox. */
export async function settledPayment(
  account: TestAccount,
  provider: PaymentProvider,
  paymentMethod = "pm_card_visa",
) {
  const order = await createTestOrder(account);
  const paid = await payUntilSettled(account, newKey(), { orderId: order.id, paymentMethod }, provider);
  const payment = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
  const topic: TTopic = paid.ok ? "payment.succeeded" : "payment.declined";
  return { order, payment, messageId: paymentMessageId(topic, payment.id) };
}

/** The outbox row as the relay would publish it. */
export async function envelopeOf(messageId: string): Promise<TEnvelope> {
  const row = await db().outboxMessage.findUniqueOrThrow({ where: { id: messageId } });
  return {
    messageId: row.id,
    topic: row.topic as TTopic,
    createdAt: row.createdAt.toISOString(),
    payload: row.payload,
  };
}
