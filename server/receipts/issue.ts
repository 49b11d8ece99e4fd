import type { Db } from "../db";
import { type TEnvelope, ZPaymentSucceeded } from "../outbox";

/** This consumer's name in processed_messages. */
export const RECEIPTS_CONSUMER = "receipts";

export type IssueOutcome = { issued: true; number: string } | { issued: false };

/**
 * Issues the receipt a payment.succeeded message asks for. The message id is claimed in
 * processed_messages first, in the same transaction as the receipt: a redelivery finds the claim
 * and does nothing, and a concurrent duplicate waits on the first claim's row lock, then finds it.
 * Only the payload is read, never the payments tables: the receipts service could live apart.
 */
export async function issueReceipt(prisma: Db, envelope: TEnvelope): Promise<IssueOutcome> {
  const event = ZPaymentSucceeded.parse(envelope.payload);
  const lineTotal = event.lines.reduce((sum, l) => sum + l.lineTotal, 0);
  if (lineTotal !== event.amount)
    throw new Error(`message ${envelope.messageId}: lines total ${lineTotal}, payment ${event.amount}`);
  return prisma.$transaction(async (tx) => {
    const claimed = await tx.$executeRaw`
      INSERT INTO processed_messages (consumer, message_id) VALUES (${RECEIPTS_CONSUMER}, ${envelope.messageId})
      ON CONFLICT DO NOTHING`;
    if (claimed === 0) return { issued: false };
    const [next] = await tx.$queryRaw<{ seq: string; year: string }[]>`
      SELECT nextval('receipt_number_seq')::text AS seq, to_char(now() AT TIME ZONE 'UTC', 'YYYY') AS year`;
    if (!next) throw new Error("receipt_number_seq returned nothing");
    const number = `R-${next.year}-${next.seq.padStart(6, "0")}`;
    await tx.receipt.create({
      data: {
        number,
        orderId: event.orderId,
        paymentId: event.paymentId,
        messageId: envelope.messageId,
        lines: event.lines,
        totalMinor: event.amount,
        currency: event.currency,
      },
    });
    return { issued: true, number };
  });
}
