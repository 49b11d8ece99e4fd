import { type Cte, requirement, type StatementBuilder, sql } from "@idempotent-checkout/idempotency/sql";
import type { Payment, Prisma } from "../generated/prisma/client";
import {
  paymentMessageId,
  refundMessageId,
  type TRefundSucceeded,
  type TTopic,
  ZPaymentDeclined,
  ZPaymentSucceeded,
  ZRefundSucceeded,
} from "./events";

type Tx = Prisma.TransactionClient;

/** What a payment event says of its payment. */
export type PaymentFacts = Pick<
  Payment,
  | "id"
  | "orderId"
  | "accountId"
  | "amountMinor"
  | "currency"
  | "updatedAt"
  | "providerChargeId"
  | "failureCode"
>;

/**
 * Writes the event of a settled payment to the outbox, on the transaction that settles it: the
 * booking and its event commit together or not at all. A second write for the same event is a
 * primary-key violation, so a payment can never be announced twice.
 */
export async function recordPaymentEvent(
  tx: Tx,
  payment: PaymentFacts,
  topic: Exclude<TTopic, "refund.succeeded">,
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
    // payment.declined and payment.canceled say why; payment.authorized has no failure (null).
    payload = ZPaymentDeclined.parse({ ...facts, failureCode: payment.failureCode });
  }
  const messageId = paymentMessageId(topic, payment.id);
  await tx.outboxMessage.create({ data: { id: messageId, topic, payload } });
  return { messageId };
}

/** The payments columns the success event reads from the settling statement's row. */
export type SettledPaymentColumns =
  | "id"
  | "order_id"
  | "account_id"
  | "amount_minor"
  | "currency"
  | "provider_charge_id"
  | "updated_at"
  | "captured_minor";

/** Fails a settling statement whose success event was not written. */
export const EVENT_NOT_WRITTEN = requirement("outbox.event_not_written");

/**
 * The outbox row of a payment's success, added to the statement that settles it as a
 * data-modifying CTE over `settled` (the CTE that settled the payment), with the requirement
 * that it was written. The payload has the shape of ZPaymentSucceeded (checked by the writer's
 * test and by every consumer).
 */
export function paymentSucceededEvent(
  b: StatementBuilder,
  paymentId: string,
  settled: Cte<SettledPaymentColumns>,
): void {
  const event = b.cte<"id">(
    sql`
      INSERT INTO outbox_messages (id, topic, payload)
      SELECT ${paymentMessageId("payment.succeeded", paymentId)}, 'payment.succeeded', jsonb_build_object(
               'paymentId', s.id, 'orderId', s.order_id, 'accountId', s.account_id,
               'amount', coalesce(s.captured_minor, s.amount_minor), 'currency', s.currency,
               'occurredAt', to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'providerChargeId', s.provider_charge_id,
               -- A partial capture's receipt shows what was released, so its lines add up to what was taken.
               'lines', (SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'name', i.name,
                                  'unitPrice', i.unit_price_minor, 'quantity', i.quantity,
                                  'lineTotal', i.line_total_minor) ORDER BY i.id)
                           FROM order_items i WHERE i.order_id = s.order_id)
                        || CASE WHEN s.captured_minor < s.amount_minor THEN jsonb_build_array(jsonb_build_object(
                             'sku', 'RELEASED', 'name', 'Authorized, not captured (released)',
                             'unitPrice', s.captured_minor - s.amount_minor, 'quantity', 1,
                             'lineTotal', s.captured_minor - s.amount_minor)) ELSE '[]'::jsonb END)
        FROM ${settled} s
      RETURNING id`,
    "outbox_event",
  );
  b.require(sql`(SELECT count(*) FROM ${event}) = 1`, EVENT_NOT_WRITTEN);
}

/**
 * Writes refund.succeeded on the transaction that settles and books the refund: one message per
 * refund (its id is the primary key), so a refund is never announced twice.
 */
export async function recordRefundEvent(tx: Tx, refund: TRefundSucceeded): Promise<{ messageId: string }> {
  const payload = ZRefundSucceeded.parse(refund);
  const messageId = refundMessageId(refund.refundId);
  await tx.outboxMessage.create({ data: { id: messageId, topic: "refund.succeeded", payload } });
  return { messageId };
}

/**
 * The outbox row of a payment's change that carries no receipt (payment.authorized, a hold's
 * payment.canceled), added to the statement that makes it, as paymentSucceededEvent is. The
 * payload has ZPaymentDeclined's shape (`failureCode`: why it was canceled; null when authorized).
 */
export function paymentChangedEvent(
  b: StatementBuilder,
  topic: "payment.authorized" | "payment.canceled",
  paymentId: string,
  settled: Cte<SettledPaymentColumns>,
  failureCode: string | null = null,
): void {
  const event = b.cte<"id">(
    sql`
      INSERT INTO outbox_messages (id, topic, payload)
      SELECT ${paymentMessageId(topic, paymentId)}, ${topic}, jsonb_build_object(
               'paymentId', s.id, 'orderId', s.order_id, 'accountId', s.account_id,
               'amount', s.amount_minor, 'currency', s.currency,
               'occurredAt', to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'failureCode', ${failureCode}::text)
        FROM ${settled} s
      RETURNING id`,
    "outbox_changed",
  );
  b.require(sql`(SELECT count(*) FROM ${event}) = 1`, EVENT_NOT_WRITTEN);
}
