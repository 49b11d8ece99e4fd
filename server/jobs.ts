import { expireAuthorizations } from "./authorizations";
import { type Db, db } from "./db";
import { env, requireDatabaseUrl } from "./env";
import { idempotency, startCounterFlush } from "./keys";
import { errorField, logger } from "./log";
import { MONEY_OPERATIONS } from "./money-operations";
import { completerOptions } from "./operation";
import {
  type Poller,
  pruneSentMessages,
  startQueueTransport,
  startRelay,
  type TransportOptions,
} from "./outbox";
import { type PaymentProvider, paymentProvider } from "./provider";
import { catchUpProviderEvents } from "./provider-events";
import { startReceiptsConsumer } from "./receipts";
import { runReconciliation } from "./reconciler";
import { pruneWebhookMessages, startWebhookDelivery, startWebhookFanOut } from "./webhooks";

interface Job {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
}

/**
 * The background work of a server or worker process: the completers (every money operation), the
 * authorizations' expiry, the provider events' catch-up, the key sweep, counter flushing, a
 * periodic reconciliation, the outbox relay, the receipts consumer, and the merchant webhooks'
 * fan-out and delivery. Each job never overlaps itself; every one is safe to run in several
 * processes at once.
 */
export function startBackgroundJobs(
  deps: { prisma?: Db; provider?: PaymentProvider } = {},
): () => Promise<void> {
  const prisma = deps.prisma ?? db();
  const provider = deps.provider ?? paymentProvider();
  const jobs: Job[] = [
    ...MONEY_OPERATIONS.map((op) => ({
      name: `completer ${op.procedure}`,
      everyMs: 2_000,
      run: () => op.complete({ prisma, provider }, completerOptions()),
    })),
    { name: "authorization expiry", everyMs: 5_000, run: () => expireAuthorizations({ prisma, provider }) },
    {
      name: "provider events catch-up",
      everyMs: env.PROVIDER_EVENTS_CATCH_UP_SECONDS * 1000,
      run: () =>
        catchUpProviderEvents(
          { prisma, provider },
          { lookbackSeconds: env.PROVIDER_EVENTS_LOOKBACK_SECONDS },
        ),
    },
    { name: "sweep", everyMs: 60_000, run: () => idempotency.sweep(prisma) },
    {
      name: "retention",
      everyMs: 10 * 60_000,
      run: async () => {
        const olderThanSeconds = env.WEBHOOK_RETENTION_DAYS * 86_400;
        await pruneWebhookMessages(prisma, { olderThanSeconds });
        await pruneSentMessages(prisma, { olderThanSeconds });
      },
    },
    {
      name: "reconciler",
      everyMs: env.RECONCILE_INTERVAL_SECONDS * 1000,
      run: () => runReconciliation({ prisma, provider }),
    },
  ];
  const running = new Set<Promise<unknown>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const p = job
        .run()
        .catch((error: unknown) =>
          logger.warn({ job: job.name, err: errorField(error) }, "background job failed"),
        )
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    }, job.everyMs);
    timer.unref();
    return timer;
  });
  const stopMessaging = startMessaging(prisma);
  const stopFlush = startCounterFlush(prisma);
  const webhookDelivery = startWebhookDelivery(prisma);
  return async () => {
    for (const t of timers) clearInterval(t);
    await Promise.allSettled([...running, stopMessaging(), webhookDelivery.stop()]);
    await stopFlush();
  };
}

/**
 * The outbox relay, the receipts consumer and the webhooks' fan-out, on one queue connection per process. The queue
 * (pg-boss, in this database) may be unreachable at boot: keep trying until it is.
 */
export function startMessaging(prisma: Db, options: Partial<TransportOptions> = {}): () => Promise<void> {
  let stopped = false;
  let wake = () => {};
  const started = (async () => {
    for (let delayMs = 1_000; !stopped; delayMs = Math.min(delayMs * 2, 30_000)) {
      try {
        const transport = await startQueueTransport({ connectionString: requireDatabaseUrl(), ...options });
        const pollers: Poller[] = [
          startRelay({ prisma, transport }),
          startReceiptsConsumer({ prisma, transport }),
          startWebhookFanOut({ prisma, transport }),
        ];
        return { transport, pollers };
      } catch (error) {
        logger.warn({ err: errorField(error), retryInMs: delayMs }, "message transport did not start");
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          timer.unref();
          wake = resolve;
        });
      }
    }
    return null;
  })();
  return async () => {
    stopped = true;
    wake();
    const running = await started;
    if (!running) return;
    await Promise.allSettled(running.pollers.map((p) => p.stop()));
    await running.transport.stop();
  };
}
