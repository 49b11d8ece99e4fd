import { z } from "zod";

/**
 * The events that cross the service boundary, and the envelope they travel in. Both the
 * producer (phase 3, through the outbox) and the consumers validate against these schemas.
 */
export const TOPICS = [
  "payment.succeeded",
  "payment.declined",
  "payment.authorized",
  "payment.canceled",
  "refund.succeeded",
] as const;
export type TTopic = (typeof TOPICS)[number];

/**
 * The message id is the idempotency key of the hop: derived from the payment and the event, so
 * every attempt, retry or takeover that books this payment names the same message. The payment's
 * id (a UUIDv7, in time order) comes first, so that the outbox's and the inbox's keys grow at the
 * end of their indexes whatever the topic (decision 0130).
 */
export function paymentMessageId(topic: TTopic, paymentId: string): string {
  return `${paymentId}:${topic}`;
}

/** A refund's event names its refund the same way: one message per refund, whatever retried it. */
export function refundMessageId(refundId: string): string {
  return `${refundId}:refund.succeeded`;
}

export const ZReceiptLine = z.object({
  sku: z.string(),
  name: z.string(),
  unitPrice: z.number().int(),
  quantity: z.number().int().positive(),
  lineTotal: z.number().int(),
});
export type TReceiptLine = z.infer<typeof ZReceiptLine>;

const paymentFacts = {
  paymentId: z.uuid(),
  orderId: z.uuid(),
  accountId: z.uuid(),
  amount: z.number().int().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/),
  occurredAt: z.iso.datetime({ offset: true }),
};

/** Self-contained, so the receipts service never reads the payments tables. */
export const ZPaymentSucceeded = z.object({
  ...paymentFacts,
  providerChargeId: z.string(),
  lines: z.array(ZReceiptLine).min(1),
});
export type TPaymentSucceeded = z.infer<typeof ZPaymentSucceeded>;

export const ZPaymentDeclined = z.object({
  ...paymentFacts,
  failureCode: z.string().nullable(),
});
export type TPaymentDeclined = z.infer<typeof ZPaymentDeclined>;

/** A refund that reached the shopper's card: self-contained, for the refund receipt. */
export const ZRefundSucceeded = z.object({
  refundId: z.uuid(),
  paymentId: z.uuid(),
  orderId: z.uuid(),
  accountId: z.uuid(),
  amount: z.number().int().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/),
  reason: z.string().min(1),
  providerRefundId: z.string(),
  occurredAt: z.iso.datetime({ offset: true }),
});
export type TRefundSucceeded = z.infer<typeof ZRefundSucceeded>;

export type TPayloadOf<T extends TTopic> = T extends "payment.succeeded"
  ? TPaymentSucceeded
  : T extends "refund.succeeded"
    ? TRefundSucceeded
    : TPaymentDeclined;

/** What the transport carries: the outbox row, as published. */
export const ZEnvelope = z.object({
  messageId: z.string().min(1),
  topic: z.enum(TOPICS),
  createdAt: z.iso.datetime({ offset: true }),
  payload: z.unknown(),
});
export type TEnvelope = z.infer<typeof ZEnvelope>;
