import { db } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { relayOutboxBatch } from "../../outbox/relay";
import { type MessageTransport, QUEUES, startQueueTransport } from "../../outbox/transport";
import { consumeReceipts } from "../../receipts";
import { FAST_TRANSPORT, testDatabaseUrl } from "./fast";

export function startTestTransport(applicationName = "checkout-messaging-test") {
  return startQueueTransport({ connectionString: testDatabaseUrl(), ...FAST_TRANSPORT, applicationName });
}

/**
 * The receipts queue's jobs, kept and archived, one row per message they hold: a job holds one
 * message, or a relay's batch (`{ batch: [...] }`). Columns: job_id, state, retry_count,
 * started_on, message_id.
 */
export const queuedMessages = Prisma.sql`(
  SELECT j.id AS job_id, j.state, j.retry_count, j.started_on,
         coalesce(e->>'messageId', j.data->>'messageId') AS message_id
    FROM (SELECT id, state, retry_count, started_on, data FROM pgboss.job WHERE name = ${QUEUES.receipts}
          UNION ALL
          SELECT id, state, retry_count, started_on, data FROM pgboss.archive WHERE name = ${QUEUES.receipts}) j
    CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN j.data ? 'batch' THEN j.data->'batch' ELSE '[null]'::jsonb END) e
)`;

/** Every time a message was put on the receipts queue, whatever became of it since. */
export async function deliveriesOf(messageId: string) {
  return db().$queryRaw<{ state: string; retry_count: number }[]>`
    SELECT state::text, retry_count FROM ${queuedMessages} q WHERE message_id = ${messageId}`;
}

/** Publishes everything pending (other tests' rows too), so a test starts from an empty outbox. */
export async function drainOutbox(transport: MessageTransport) {
  while ((await relayOutboxBatch({ prisma: db(), transport })).more);
}

/** Consumes everything deliverable now, so a test's own deliveries are next in line. */
export async function drainReceiptsQueue(transport: MessageTransport) {
  while ((await consumeReceipts({ prisma: db(), transport }, { batchSize: 50 })).delivered > 0);
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
