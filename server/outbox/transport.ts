import PgBoss from "pg-boss";
import { closedByServer, connectionSettings, newId } from "../db";
import { errorField, logger } from "../log";
import type { TEnvelope, TTopic } from "./events";

/**
 * The message transport: pg-boss queues in PostgreSQL (their own schema, created by pg-boss at
 * start), so the embedded default needs no other server. Deliveries are at least once: a
 * delivery that is not acknowledged within `ackTimeoutSeconds` (its consumer died) is delivered
 * again, after a backoff, up to `retryLimit` times, then parked in the dead-letter queue.
 */
export const QUEUES = {
  receipts: "receipts",
  receiptsDead: "receipts-dead",
  webhooks: "webhooks",
  webhooksDead: "webhooks-dead",
} as const;

/**
 * Where each topic is delivered; a topic nobody consumes is published to no queue. Every topic
 * goes to the merchant webhooks' fan-out (decision 0185).
 */
export const ROUTES: Record<TTopic, readonly string[]> = {
  "payment.succeeded": [QUEUES.receipts, QUEUES.webhooks],
  "payment.declined": [QUEUES.webhooks],
  "payment.authorized": [QUEUES.webhooks],
  "payment.canceled": [QUEUES.webhooks],
  "refund.succeeded": [QUEUES.receipts, QUEUES.webhooks],
};
const DEAD_LETTER: Record<string, string> = {
  [QUEUES.receipts]: QUEUES.receiptsDead,
  [QUEUES.webhooks]: QUEUES.webhooksDead,
};

export interface TransportOptions {
  connectionString: string;
  /** pg-boss's schema in our database. */
  schema?: string;
  ackTimeoutSeconds?: number;
  retryDelaySeconds?: number;
  /** Double the delay after each failed delivery (from retryDelaySeconds), or keep it flat. */
  retryBackoff?: boolean;
  retryLimit?: number;
  /** How often some process looks for unacknowledged deliveries past their timeout. */
  maintenanceIntervalSeconds?: number;
  poolSize?: number;
  /** Names its connections in pg_stat_activity. */
  applicationName?: string;
}

export const TRANSPORT_DEFAULTS = {
  schema: "pgboss",
  ackTimeoutSeconds: 60,
  retryDelaySeconds: 5,
  retryBackoff: true,
  // With exponential backoff from 5 s, the last of 12 redeliveries comes hours later; the
  // reconciler reports a payment still without its receipt long before that.
  retryLimit: 12,
  maintenanceIntervalSeconds: 15,
  poolSize: 4,
  applicationName: "checkout-messaging",
} satisfies Omit<Required<TransportOptions>, "connectionString">;

export interface Delivery {
  jobId: string;
  queue: string;
  data: unknown;
  /** 0 on the first delivery. */
  redeliveries: number;
}

/**
 * What a job holds: one envelope (`publish`), or, from `publishAll`, every envelope of the batch
 * for that queue. A batch is one job however many messages it holds: pg-boss writes each job
 * three times (sent, fetched, completed), with its indexes, so one job per message cost more WAL
 * than the payment it announced (decision 0122).
 */
interface BatchJob {
  batch: unknown[];
}
const isBatchJob = (data: unknown): data is BatchJob =>
  typeof data === "object" && data !== null && Array.isArray((data as BatchJob).batch);

export interface MessageTransport {
  /** Sends the envelope to every queue its topic is routed to; throws unless all took it. */
  publish(envelope: TEnvelope): Promise<number>;
  /** Sends every envelope to its queues in one statement; throws when it could not. */
  publishAll(envelopes: TEnvelope[]): Promise<void>;
  /**
   * The messages of up to `max` jobs (a batch job holds several), each invisible to other
   * receivers until its job is acknowledged or timed out.
   */
  receive(queue: string, max: number): Promise<Delivery[]>;
  /**
   * Acknowledges deliveries, one statement per queue; a batch job is completed once each of its
   * deliveries was acknowledged or given back.
   */
  ack(deliveries: Delivery[]): Promise<void>;
  /**
   * Gives the delivery back for a later redelivery (with backoff), or the dead-letter queue; a
   * message of a batch job goes back on the queue alone, so that it holds up none of the others.
   */
  reject(delivery: Delivery, error: unknown): Promise<void>;
  stop(): Promise<void>;
}

export async function startQueueTransport(options: TransportOptions): Promise<MessageTransport> {
  const o = { ...TRANSPORT_DEFAULTS, ...options };
  const boss = new PgBoss({
    connectionString: o.connectionString,
    schema: o.schema,
    max: o.poolSize,
    application_name: o.applicationName,
    // pg-boss hands its options to its own pg.Pool: the same bounds as the app's pools.
    ...connectionSettings(),
    migrate: true,
    supervise: true,
    schedule: false,
    maintenanceIntervalSeconds: o.maintenanceIntervalSeconds,
  });
  // The pool reconnects by itself after the database restarts; until then each call fails and
  // its caller backs off. An unhandled "error" event would end the process instead.
  boss.on("error", (error) => {
    if (closedByServer(error))
      logger.info({ code: error.code }, "database closed a message transport connection");
    else logger.warn({ err: errorField(error) }, "message transport failed");
  });
  await boss.start();
  try {
    for (const queue of [...Object.values(DEAD_LETTER), ...new Set(Object.values(ROUTES).flat())]) {
      const config = {
        name: queue,
        retryLimit: o.retryLimit,
        retryDelay: o.retryDelaySeconds,
        retryBackoff: o.retryBackoff,
        expireInSeconds: o.ackTimeoutSeconds,
        ...(DEAD_LETTER[queue] ? { deadLetter: DEAD_LETTER[queue] } : {}),
      };
      // Declared by every process at start: the last one's settings win.
      await boss.createQueue(queue, config);
      await boss.updateQueue(queue, config);
    }
  } catch (error) {
    await boss.stop({ graceful: false });
    throw error;
  }

  // Batch jobs received by this process and how many of their deliveries are not settled yet.
  const unsettled = new Map<string, number>();
  /** Settles deliveries; returns the jobs now done: single ones, and batches with nothing left. */
  const settle = (deliveries: Delivery[]): Delivery[] => {
    const done: Delivery[] = [];
    for (const d of deliveries) {
      const left = unsettled.get(d.jobId);
      if (left === undefined) done.push(d);
      else if (left <= 1) {
        unsettled.delete(d.jobId);
        done.push(d);
      } else unsettled.set(d.jobId, left - 1);
    }
    return done;
  };
  const complete = async (deliveries: Delivery[]) => {
    for (const queue of new Set(deliveries.map((d) => d.queue))) {
      const ids = [...new Set(deliveries.filter((d) => d.queue === queue).map((d) => d.jobId))];
      await boss.complete(queue, ids);
    }
  };

  return {
    async publish(envelope) {
      const queues = ROUTES[envelope.topic];
      if (!queues) throw new Error(`no route for topic ${envelope.topic}`);
      for (const queue of queues) {
        // Null means pg-boss inserted nothing (a queue missing): not delivered.
        if ((await boss.send(queue, envelope, { id: newId() })) === null)
          throw new Error(`queue ${queue} refused message ${envelope.messageId}`);
      }
      return queues.length;
    },
    async publishAll(envelopes) {
      const routed = envelopes.flatMap((envelope) => {
        const queues = ROUTES[envelope.topic];
        if (!queues) throw new Error(`no route for topic ${envelope.topic}`);
        return queues.map((name) => ({ name, envelope }));
      });
      // One job per queue for the whole batch; our own time-ordered job ids: pg-boss's default is
      // a random UUID (decision 0046).
      const jobs = [...new Set(routed.map((r) => r.name))].map((name) => {
        const batch = routed.filter((r) => r.name === name).map((r) => r.envelope);
        return { name, id: newId(), data: batch.length === 1 ? batch[0] : { batch } };
      });
      // One INSERT for the batch, with each queue's policy, as send() applies it. Unlike send(),
      // insert() reports nothing, and a missing queue would drop its jobs silently: so each
      // queue is looked up first (one statement per queue and pass, not per message).
      for (const name of new Set(jobs.map((j) => j.name))) {
        if (!(await boss.getQueue(name))) throw new Error(`queue ${name} does not exist`);
      }
      if (jobs.length > 0) await boss.insert(jobs);
    },
    async receive(queue, max) {
      const jobs = await boss.fetch<unknown>(queue, { batchSize: max, includeMetadata: true });
      return jobs.flatMap((j) => {
        const delivery = { jobId: j.id, queue, redeliveries: j.retryCount };
        if (!isBatchJob(j.data)) return [{ ...delivery, data: j.data }];
        unsettled.set(j.id, j.data.batch.length);
        return j.data.batch.map((data) => ({ ...delivery, data }));
      });
    },
    async ack(deliveries) {
      await complete(settle(deliveries));
    },
    async reject(delivery, error) {
      if (!unsettled.has(delivery.jobId)) {
        await boss.fail(delivery.queue, delivery.jobId, {
          message: error instanceof Error ? error.message : String(error),
        });
        return;
      }
      // Alone on the queue after the first delay, then retried and dead-lettered as any message.
      const alone = await boss.send(delivery.queue, delivery.data as object, {
        id: newId(),
        startAfter: o.retryDelaySeconds,
      });
      if (alone === null) throw new Error(`queue ${delivery.queue} refused a given-back message`);
      await complete(settle([delivery]));
    },
    async stop() {
      await boss.stop({ graceful: false, wait: true });
    },
  };
}
