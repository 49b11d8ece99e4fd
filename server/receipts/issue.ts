import { type Db, rawQuery } from "../db";
import { Prisma } from "../generated/prisma/client";
import { type TEnvelope, ZPaymentSucceeded } from "../outbox";

/** This consumer's name in processed_messages. */
export const RECEIPTS_CONSUMER = "receipts";

export type IssueOutcome = { issued: true; number: string } | { issued: false };

/**
 * Issues the receipt a payment.succeeded message asks for. The message id is claimed in
 * processed_messages first, in the same statement as the receipt: a redelivery finds the claim
 * and does nothing, and a concurrent duplicate waits on the first claim's row lock, then finds it.
 * Only the payload is read, never the payments tables: the receipts service could live apart.
 */
export async function issueReceipt(prisma: Db, envelope: TEnvelope): Promise<IssueOutcome> {
  const event = ZPaymentSucceeded.parse(envelope.payload);
  const lineTotal = event.lines.reduce((sum, l) => sum + l.lineTotal, 0);
  if (lineTotal !== event.amount)
    throw new Error(`message ${envelope.messageId}: lines total ${lineTotal}, payment ${event.amount}`);
  // One statement, committed on its own: the claim and the receipt (numbered from the
  // sequence) together, one round trip instead of five (decision 0016).
  const rows = await rawQuery<{ number: string }>(
    prisma,
    Prisma.sql`
    WITH claimed AS (
      INSERT INTO processed_messages (consumer, message_id) VALUES (${RECEIPTS_CONSUMER}, ${envelope.messageId})
      ON CONFLICT DO NOTHING
      RETURNING message_id
    ), numbered AS (
      SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY') AS year, nextval('receipt_number_seq')::text AS seq
        FROM claimed
    )
    INSERT INTO receipts (number, order_id, payment_id, message_id, lines, total_minor, currency)
    SELECT 'R-' || year || '-' || CASE WHEN length(seq) >= 6 THEN seq ELSE lpad(seq, 6, '0') END,
           ${event.orderId}::uuid, ${event.paymentId}::uuid, ${envelope.messageId},
           ${JSON.stringify(event.lines)}::jsonb, ${event.amount}, ${event.currency}
      FROM numbered
    RETURNING number`,
  );
  const [row] = rows;
  return row ? { issued: true, number: row.number } : { issued: false };
}
