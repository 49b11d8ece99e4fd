import { db } from "../../db";
import { relayOutboxBatch } from "../../outbox/relay";
import { type MessageTransport, QUEUES, startQueueTransport } from "../../outbox/transport";
import { consumeReceipts } from "../../receipts";
import { FAST_TRANSPORT, testDatabaseUrl } from "./fast";

export function startTestTransport(applicationName = "checkout-messaging-test") {
  return startQueueTransport({ connectionString: testDatabaseUrl(), ...FAST_TRANSPORT, applicationName });
}

/** Every time a message was put on the receipts queue, whatever became of it since. */
export async function deliveriesOf(messageId: string) {
  return db().$queryRaw<{ state: string; retry_count: number }[]>`
    SELECT state::text, retry_count FROM pgboss.job WHERE name = ${QUEUES.receipts} AND data->>'messageId' = ${messageId}
    UNION ALL
    SELECT state::text, retry_count FROM pgboss.archive WHERE name = ${QUEUES.receipts} AND data->>'messageId' = ${messageId}`;
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
