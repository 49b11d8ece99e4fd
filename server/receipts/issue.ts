import { type Db, rawQuery } from "../db";
import { Prisma } from "../generated/prisma/client";
import { type TEnvelope, ZPaymentSucceeded } from "../outbox";

/** This consumer's name in processed_messages. */
export const RECEIPTS_CONSUMER = "receipts";

export type IssueOutcome = { issued: true; number: string } | { issued: false };

/** What one payment.succeeded message asks to be written, checked before anything is. */
export interface ReceiptRequest {
  messageId: string;
  orderId: string;
  paymentId: string;
  lines: unknown[];
  amount: number;
  currency: string;
}

/** Reads a payment.succeeded message; throws when it cannot be a receipt (its lines do not add up). */
export function receiptRequest(envelope: TEnvelope): ReceiptRequest {
  const event = ZPaymentSucceeded.parse(envelope.payload);
  const lineTotal = event.lines.reduce((sum, l) => sum + l.lineTotal, 0);
  if (lineTotal !== event.amount)
    throw new Error(`message ${envelope.messageId}: lines total ${lineTotal}, payment ${event.amount}`);
  const { orderId, paymentId, lines, amount, currency } = event;
  return { messageId: envelope.messageId, orderId, paymentId, lines, amount, currency };
}

/**
 * Issues the receipts a batch of messages asks for, in one statement committed on its own: each
 * message id is claimed in processed_messages with its receipt (numbered from the sequence), so a
 * redelivery finds the claim and does nothing, and a concurrent duplicate waits on the first
 * claim's row lock, then finds it. Claims are taken in message-id order, so two consumers with
 * overlapping batches wait for each other rather than deadlock. One statement for the batch, not
 * one per message: on this machine a round trip costs more than a receipt's writes. Only the
 * payload is read, never the payments tables: the receipts service could live apart.
 */
export async function issueReceipts(
  prisma: Db,
  requests: ReceiptRequest[],
): Promise<Map<string, IssueOutcome>> {
  const outcomes = new Map<string, IssueOutcome>(requests.map((r) => [r.messageId, { issued: false }]));
  if (requests.length === 0) return outcomes;
  const rows = requests.map((r) => ({
    message_id: r.messageId,
    order_id: r.orderId,
    payment_id: r.paymentId,
    lines: r.lines,
    total_minor: r.amount,
    currency: r.currency,
  }));
  const issued = await rawQuery<{ message_id: string; number: string }>(
    prisma,
    Prisma.sql`
    WITH input AS (
      SELECT DISTINCT ON (message_id) *
        FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
               AS (message_id text, order_id uuid, payment_id uuid, lines jsonb, total_minor int, currency text))
             WITH ORDINALITY AS r(message_id, order_id, payment_id, lines, total_minor, currency, ord)
       ORDER BY message_id, ord
    ), claimed AS (
      INSERT INTO processed_messages (consumer, message_id)
      SELECT ${RECEIPTS_CONSUMER}, message_id FROM input ORDER BY message_id
      ON CONFLICT DO NOTHING
      RETURNING message_id
    ), numbered AS (
      SELECT i.*, nextval('receipt_number_seq')::text AS seq
        FROM (SELECT input.* FROM input JOIN claimed USING (message_id) ORDER BY ord) i
    )
    INSERT INTO receipts (number, order_id, payment_id, message_id, lines, total_minor, currency)
    SELECT 'R-' || to_char(now() AT TIME ZONE 'UTC', 'YYYY') || '-' || CASE WHEN length(seq) >= 6 THEN seq ELSE lpad(seq, 6, '0') END,
           order_id, payment_id, message_id, lines, total_minor, currency
      FROM numbered
    RETURNING message_id, number`,
  );
  for (const row of issued) outcomes.set(row.message_id, { issued: true, number: row.number });
  return outcomes;
}

/** Issues the receipt one payment.succeeded message asks for (see issueReceipts). */
export async function issueReceipt(prisma: Db, envelope: TEnvelope): Promise<IssueOutcome> {
  const request = receiptRequest(envelope);
  return (await issueReceipts(prisma, [request])).get(request.messageId) as IssueOutcome;
}
