import type { Db } from "../db";
import { domainErrors } from "../errors";
import { ownEndpoint } from "./endpoints";
import { TEST_EVENT_TYPE } from "./event-types";
import { newMessageId } from "./fan-out";

/**
 * Sends a message again, with the same `webhook-id` and body (a receiver that already has it
 * drops it), as soon as a worker takes it. Its attempt count goes on (it fences a worker still
 * holding an earlier attempt): a replayed message whose schedule is spent has this one attempt.
 */
export async function replayMessage(prisma: Db, accountId: string, messageId: string): Promise<void> {
  const count = await prisma.$executeRaw`
    UPDATE webhook_messages m SET status = 'pending', next_attempt_at = now(), delivered_at = NULL
      FROM webhook_endpoints e
     WHERE m.id = ${messageId} AND e.id = m.endpoint_id AND e.account_id = ${accountId}::uuid
       AND e.deleted_at IS NULL`;
  if (count === 0) throw domainErrors.notFound("Webhook message");
}

/** Every failed message of one endpoint made in [since, until) is sent again; how many. */
export async function replayFailedMessages(
  prisma: Db,
  accountId: string,
  endpointId: string,
  range: { since: Date; until: Date },
): Promise<number> {
  await ownEndpoint(prisma, accountId, endpointId);
  return prisma.$executeRaw`
    UPDATE webhook_messages SET status = 'pending', next_attempt_at = now()
     WHERE endpoint_id = ${endpointId}::uuid AND status = 'failed'
       AND created_at >= ${range.since} AND created_at < ${range.until}`;
}

/** A `webhook.test` message to one endpoint, delivered like any other. */
export async function sendTestEvent(
  prisma: Db,
  accountId: string,
  endpointId: string,
): Promise<{ messageId: string }> {
  await ownEndpoint(prisma, accountId, endpointId);
  const id = newMessageId();
  const timestamp = new Date().toISOString();
  await prisma.webhookMessage.create({
    data: {
      id,
      endpointId,
      eventId: `test:${id}`,
      eventType: TEST_EVENT_TYPE,
      payload: { type: TEST_EVENT_TYPE, timestamp, data: { object: "test", message: "A test event." } },
    },
  });
  return { messageId: id };
}
