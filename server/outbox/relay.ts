import type { Db } from "../db";
import { failpoint } from "../failpoints";
import type { TEnvelope, TTopic } from "./events";
import { type Poller, startPoller } from "./poller";
import type { MessageTransport } from "./transport";

export interface RelayOptions {
  batchSize?: number;
  /** Pause between passes when there is nothing to send. */
  idleMs?: number;
  /** Cap of the per-message backoff after failed publishes. */
  maxRetryDelaySeconds?: number;
}
export const RELAY_DEFAULTS = { batchSize: 100, idleMs: 500, maxRetryDelaySeconds: 300 } as const;

interface PendingRow {
  id: string;
  topic: string;
  payload: unknown;
  created_at: Date;
}

/**
 * One pass of the relay: locks a batch of due outbox rows, publishes them (one statement for
 * the batch) and marks the published ones sent, all in one transaction. The row locks (SKIP LOCKED) keep relays in other
 * processes off these rows while this one publishes them; a relay that dies before its commit
 * releases them unsent, and they are published again: at least once, never by two at a time.
 */
export async function relayOutboxBatch(
  deps: { prisma: Db; transport: MessageTransport },
  opts: RelayOptions = {},
): Promise<{ published: number; failed: number; more: boolean }> {
  const { batchSize, maxRetryDelaySeconds } = { ...RELAY_DEFAULTS, ...opts };
  return deps.prisma.$transaction(
    async (tx) => {
      const rows = await tx.$queryRaw<PendingRow[]>`
        SELECT id, topic, payload, created_at FROM outbox_messages
         WHERE sent_at IS NULL AND next_attempt_at <= now()
         ORDER BY created_at, id
         LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED`;
      const envelopes: TEnvelope[] = rows.map((row) => ({
        messageId: row.id,
        topic: row.topic as TTopic,
        createdAt: row.created_at.toISOString(),
        payload: row.payload,
      }));
      let sent: string[] = [];
      const failed: { id: string; error: string }[] = [];
      try {
        // The batch in one statement; should it fail, one by one, so that one message that
        // cannot be published does not hold up the others.
        await deps.transport.publishAll(envelopes);
        sent = envelopes.map((e) => e.messageId);
      } catch {
        for (const envelope of envelopes) {
          try {
            await deps.transport.publish(envelope);
            sent.push(envelope.messageId);
          } catch (error) {
            failed.push({
              id: envelope.messageId,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        }
      }
      if (sent.length > 0) {
        failpoint("relay_after_publish");
        await tx.$executeRaw`
          UPDATE outbox_messages SET sent_at = now(), attempts = attempts + 1, last_error = NULL
           WHERE id = ANY(${sent}::text[])`;
      }
      for (const f of failed) {
        // Exponential backoff with jitter, per message: one poison message does not hold the rest.
        await tx.$executeRaw`
          UPDATE outbox_messages
             SET attempts = attempts + 1, last_error = left(${f.error}, 1000),
                 next_attempt_at = now() + make_interval(secs =>
                   least(power(2, attempts + 1), ${maxRetryDelaySeconds}::float8) * (0.5 + random() / 2))
           WHERE id = ${f.id}`;
      }
      return { published: sent.length, failed: failed.length, more: rows.length === batchSize };
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
}

/** The relay as a background job: passes back to back while there is a backlog. */
export function startRelay(
  deps: { prisma: Db; transport: MessageTransport },
  opts: RelayOptions = {},
): Poller {
  const idleMs = opts.idleMs ?? RELAY_DEFAULTS.idleMs;
  return startPoller("outbox relay", async () => (await relayOutboxBatch(deps, opts)).more, {
    idleMs,
    maxBackoffMs: 30_000,
  });
}
