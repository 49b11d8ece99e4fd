import type { Db } from "../db";
import { ownEndpoint } from "./endpoints";

export interface TWebhookDeliveryView {
  messageId: string;
  eventType: string;
  status: string;
  attempts: number;
  createdAt: string;
  nextAttemptAt: string | null;
  last: {
    at: string;
    outcome: string;
    httpStatus: number | null;
    latencyMs: number;
    responseExcerpt: string | null;
  } | null;
}

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
      status: m.status,
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
