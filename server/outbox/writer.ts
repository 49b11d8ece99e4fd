import type { Payment, Prisma } from "../generated/prisma/client";
import { paymentMessageId, type TTopic, ZPaymentDeclined, ZPaymentSucceeded } from "./events";

type Tx = Prisma.TransactionClient;

/**
 * Writes the event of a settled payment to the outbox, on the transaction that settles it: the
 * booking and its event commit together or not at all. A second write for the same event is a
 * primary-key violation, so a payment can never be announced twice.
 */
export async function recordPaymentEvent(
  tx: Tx,
  payment: Payment,
  topic: TTopic,
): Promise<{ messageId: string }> {
  const facts = {
    paymentId: payment.id,
    orderId: payment.orderId,
    accountId: payment.accountId,
    amount: payment.amountMinor,
    currency: payment.currency,
    occurredAt: payment.updatedAt.toISOString(),
  };
  let payload: Prisma.InputJsonObject;
  if (topic === "payment.succeeded") {
    const items = await tx.orderItem.findMany({
      where: { orderId: payment.orderId },
      orderBy: { id: "asc" },
    });
    payload = ZPaymentSucceeded.parse({
      ...facts,
      providerChargeId: payment.providerChargeId,
      lines: items.map((i) => ({
        sku: i.sku,
        name: i.name,
        unitPrice: i.unitPriceMinor,
        quantity: i.quantity,
        lineTotal: i.lineTotalMinor,
      })),
    });
  } else {
    payload = ZPaymentDeclined.parse({ ...facts, failureCode: payment.failureCode });
  }
  const messageId = paymentMessageId(topic, payment.id);
  await tx.outboxMessage.create({ data: { id: messageId, topic, payload } });
  return { messageId };
}
