import type { Prisma } from "../generated/prisma/client";
import type { TEnvelope, TTopic } from "../outbox";

/**
 * The event types a merchant may subscribe to: the outbox's topics under the names the API
 * documents (a declined payment is `payment.failed`). The captured, authorized and canceled
 * payments of issue 40 join here with their topics.
 */
export const WEBHOOK_EVENT_TYPES = ["payment.succeeded", "payment.failed", "refund.succeeded"] as const;
export type TWebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A test event is sent on request to one endpoint, whatever it subscribes to. */
export const TEST_EVENT_TYPE = "webhook.test";

const TYPE_OF_TOPIC: Record<TTopic, TWebhookEventType> = {
  "payment.succeeded": "payment.succeeded",
  "payment.declined": "payment.failed",
  "refund.succeeded": "refund.succeeded",
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
      status: envelope.topic === "payment.succeeded" ? "succeeded" : "declined",
      providerChargeId: str(p.providerChargeId),
      ...(envelope.topic === "payment.declined" ? { failureCode: str(p.failureCode) } : {}),
      updatedAt,
    },
  };
}
