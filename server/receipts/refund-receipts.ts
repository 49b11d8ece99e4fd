import type { Db } from "../db";
import { type TEnvelope, ZRefundSucceeded } from "../outbox";
import { type IssueOutcome, RECEIPTS_CONSUMER } from "./issue";

/** What one refund.succeeded message asks to be written. */
export interface RefundReceiptRequest {
  messageId: string;
  refundId: string;
  paymentId: string;
  orderId: string;
  amount: number;
  currency: string;
  reason: string;
}

export function refundReceiptRequest(envelope: TEnvelope): RefundReceiptRequest {
  const event = ZRefundSucceeded.parse(envelope.payload);
  const { refundId, paymentId, orderId, amount, currency, reason } = event;
  return { messageId: envelope.messageId, refundId, paymentId, orderId, amount, currency, reason };
}

/**
 * Issues a refund receipt (RF-<year>-<number>) for one refund.succeeded message, in one statement:
 * the message id is claimed in processed_messages with the receipt, so a redelivery does nothing.
 * Only the payload is read, never the refunds tables.
 */
export async function issueRefundReceipt(prisma: Db, request: RefundReceiptRequest): Promise<IssueOutcome> {
  const [row] = await prisma.$queryRaw<{ number: string }[]>`
    WITH claimed AS (
      INSERT INTO processed_messages (consumer, message_id) VALUES (${RECEIPTS_CONSUMER}, ${request.messageId})
      ON CONFLICT DO NOTHING
      RETURNING message_id
    ), numbered AS (
      SELECT nextval('receipt_number_seq')::text AS seq FROM claimed
    )
    INSERT INTO refund_receipts (number, refund_id, payment_id, order_id, message_id, amount_minor, currency, reason)
    SELECT 'RF-' || to_char(now() AT TIME ZONE 'UTC', 'YYYY') || '-' || CASE WHEN length(seq) >= 6 THEN seq ELSE lpad(seq, 6, '0') END,
           ${request.refundId}::uuid, ${request.paymentId}::uuid, ${request.orderId}::uuid, ${request.messageId},
           ${request.amount}::int, ${request.currency}, ${request.reason}
      FROM numbered
    RETURNING number`;
  return row ? { issued: true, number: row.number } : { issued: false };
}

/** The refund receipts of an order: refund id → receipt number. */
export async function refundReceiptNumbers(prisma: Db, orderId: string): Promise<Map<string, string>> {
  const rows = await prisma.refundReceipt.findMany({
    where: { orderId },
    select: { refundId: true, number: true },
  });
  return new Map(rows.map((r) => [r.refundId, r.number]));
}
