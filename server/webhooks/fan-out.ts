import type { Db } from "../db";
import { newId } from "../db";
import {
  type Delivery,
  type MessageTransport,
  type Poller,
  QUEUES,
  startPoller,
  type TEnvelope,
  ZEnvelope,
} from "../outbox";
import { webhookEventType, webhookPayload } from "./event-types";

/** A message's id, the `webhook-id` of all its attempts: time-ordered, so its index grows at the end. */
export function newMessageId(): string {
  return `msg_${newId().replaceAll("-", "")}`;
}

/**
 * Turns outbox events into one message per event and subscribed endpoint (decision 0185). The
 * unique (event, endpoint) pair makes a second delivery of the same event a no-op, so each
 * message is made exactly once however often the queue delivers. An endpoint registered after
 * the event, disabled or deleted gets none.
 */
export async function fanOutEvents(prisma: Db, envelopes: readonly TEnvelope[]): Promise<number> {
  const events = envelopes.flatMap((envelope) => {
    const accountId = (envelope.payload as { accountId?: unknown } | null)?.accountId;
    return typeof accountId === "string"
      ? [{ envelope, accountId, type: webhookEventType(envelope.topic) }]
      : [];
  });
  if (events.length === 0) return 0;
  const endpoints = await prisma.webhookEndpoint.findMany({
    where: {
      accountId: { in: [...new Set(events.map((e) => e.accountId))] },
      disabledAt: null,
      deletedAt: null,
    },
    select: { id: true, accountId: true, eventTypes: true, createdAt: true },
  });
  if (endpoints.length === 0) return 0;
  const rows = events.flatMap(({ envelope, accountId, type }) =>
    endpoints
      .filter(
        (e) =>
          e.accountId === accountId &&
          e.eventTypes.includes(type) &&
          e.createdAt.getTime() <= Date.parse(envelope.createdAt),
      )
      .map((e) => ({
        id: newMessageId(),
        endpointId: e.id,
        eventId: envelope.messageId,
        eventType: type,
        payload: { ...webhookPayload(envelope) },
      })),
  );
  if (rows.length === 0) return 0;
  const { count } = await prisma.webhookMessage.createMany({ data: rows, skipDuplicates: true });
  return count;
}

export const FAN_OUT_DEFAULTS = { batchSize: 50, idleMs: 500 } as const;

/** One pass of the fan-out: its queue's deliveries turned into messages, then acknowledged. */
export async function fanOutPass(
  deps: { prisma: Db; transport: MessageTransport },
  opts: { batchSize?: number } = {},
): Promise<{ delivered: number; created: number; more: boolean }> {
  const batchSize = opts.batchSize ?? FAN_OUT_DEFAULTS.batchSize;
  const deliveries = await deps.transport.receive(QUEUES.webhooks, batchSize);
  const good: { delivery: Delivery; envelope: TEnvelope }[] = [];
  for (const delivery of deliveries) {
    const parsed = ZEnvelope.safeParse(delivery.data);
    if (parsed.success) good.push({ delivery, envelope: parsed.data });
    else await deps.transport.reject(delivery, parsed.error).catch(() => undefined);
  }
  // A crash before the ack brings the batch back; the unique pair makes it a no-op then.
  const created = await fanOutEvents(
    deps.prisma,
    good.map((g) => g.envelope),
  );
  if (good.length > 0) await deps.transport.ack(good.map((g) => g.delivery));
  return { delivered: deliveries.length, created, more: deliveries.length >= batchSize };
}

export function startWebhookFanOut(
  deps: { prisma: Db; transport: MessageTransport },
  opts: { batchSize?: number; idleMs?: number } = {},
): Poller {
  return startPoller("webhook fan-out", async () => (await fanOutPass(deps, opts)).more, {
    idleMs: opts.idleMs ?? FAN_OUT_DEFAULTS.idleMs,
    maxBackoffMs: 30_000,
  });
}
