import type { Prisma } from "../generated/prisma/client";
import type { TEnvelope, TTopic } from "../outbox";

/**
 * The event types a merchant may subscribe to: the outbox's topics under the names the API
 * documents (a declined payment is `payment.failed`). A captured authorization is a
 * `payment.succeeded` (amount: what was captured).
 */
export const WEBHOOK_EVENT_TYPES = [
  "payment.succeeded",
  "payment.failed",
  "payment.authorized",
  "payment.canceled",
  "refund.succeeded",
] as const;
export type TWebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A test event is sent on request to one endpoint, whatever it subscribes to. */
export const TEST_EVENT_TYPE = "webhook.test";

const TYPE_OF_TOPIC: Record<TTopic, TWebhookEventType> = {
  "payment.succeeded": "payment.succeeded",
  "payment.declined": "payment.failed",
  "payment.authorized": "payment.authorized",
  "payment.canceled": "payment.canceled",
  "refund.succeeded": "refund.succeeded",
};

const STATUS_OF_TOPIC: Record<Exclude<TTopic, "refund.succeeded">, string> = {
  "payment.succeeded": "succeeded",
  "payment.declined": "declined",
  "payment.authorized": "authorized",
  "payment.canceled": "canceled",
};

export function webhookEventType(topic: TTopic): TWebhookEventType {
  return TYPE_OF_TOPIC[topic];
}

/** The body of every attempt: Standard Webhooks' recommended `{type, timestamp, data}`. */
export interface TWebhookPayload {
  type: string;
  timestamp: string;
  data: Prisma.InputJsonObject;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * The object as the API returns it (`GET /api/v1/payments/{id}`, the admin's refund), with
 * `updatedAt`: no order across events is promised, so a receiver keeps the newest per object.
 */
export function webhookPayload(envelope: TEnvelope): TWebhookPayload {
  const p = (envelope.payload ?? {}) as Record<string, Prisma.InputJsonValue | null>;
  const type = webhookEventType(envelope.topic);
  const updatedAt = str(p.occurredAt) ?? envelope.createdAt;
  if (envelope.topic === "refund.succeeded")
    return {
      type,
      timestamp: updatedAt,
      data: {
        object: "refund",
        id: p.refundId,
        paymentId: p.paymentId,
        amountMinor: p.amount,
        currency: p.currency,
        reason: p.reason,
        status: "succeeded",
        providerRefundId: str(p.providerRefundId),
        updatedAt,
      },
    };
  return {
    type,
    timestamp: updatedAt,
    data: {
      object: "payment",
      id: p.paymentId,
      orderId: p.orderId,
      amount: p.amount,
      currency: p.currency,
      status: STATUS_OF_TOPIC[envelope.topic],
      providerChargeId: str(p.providerChargeId),
      ...(envelope.topic === "payment.declined" || envelope.topic === "payment.canceled"
        ? { failureCode: str(p.failureCode) }
        : {}),
      updatedAt,
    },
  };
}
