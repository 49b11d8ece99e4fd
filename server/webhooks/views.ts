import { z } from "zod";
import type { Db } from "../db";
import { ownEndpoint } from "./endpoints";

export const ZWebhookDelivery = z
  .object({
    messageId: z.string(),
    eventType: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    createdAt: z.string(),
    nextAttemptAt: z.string().nullable(),
    last: z
      .object({
        at: z.string(),
        outcome: z.string(),
        httpStatus: z.number().int().nullable(),
        latencyMs: z.number().int(),
        responseExcerpt: z.string().nullable(),
      })
      .nullable(),
  })
  .meta({ id: "WebhookDelivery" });
export type TWebhookDeliveryView = z.infer<typeof ZWebhookDelivery>;

/** The endpoint's latest messages, newest first, each with its latest attempt. */
export async function recentDeliveries(
  prisma: Db,
  accountId: string,
  endpointId: string,
  limit = 20,
): Promise<TWebhookDeliveryView[]> {
  await ownEndpoint(prisma, accountId, endpointId);
  const messages = await prisma.webhookMessage.findMany({
    where: { endpointId },
    orderBy: { createdAt: "desc" },
    take: limit,
  });
  const attempts = await prisma.webhookAttempt.findMany({
    where: { messageId: { in: messages.map((m) => m.id) } },
    orderBy: { startedAt: "desc" },
  });
  return messages.map((m) => {
    const last = attempts.find((a) => a.messageId === m.id);
    return {
      messageId: m.id,
      eventType: m.eventType,
      status: m.status as TWebhookDeliveryView["status"],
      attempts: m.attempts,
      createdAt: m.createdAt.toISOString(),
      nextAttemptAt: m.status === "pending" ? m.nextAttemptAt.toISOString() : null,
      last: last
        ? {
            at: last.startedAt.toISOString(),
            outcome: last.outcome,
            httpStatus: last.httpStatus,
            latencyMs: last.latencyMs,
            responseExcerpt: last.responseExcerpt,
          }
        : null,
    };
  });
}
