import { type Db, db } from "./db";
import { counters, sweepExpiredKeys } from "./idempotency";
import { completeAbandonedPayments } from "./payments/completer";
import { type PaymentProvider, paymentProvider } from "./payments/provider";
import { runReconciliation } from "./payments/reconciler";

interface Job {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
}

/**
 * The background work of a server or worker process: the completer, the key sweep, counter
 * flushing and a periodic reconciliation. Each job never overlaps itself; every one is safe to
 * run in several processes at once.
 */
export function startBackgroundJobs(
  deps: { prisma?: Db; provider?: PaymentProvider } = {},
): () => Promise<void> {
  const prisma = deps.prisma ?? db();
  const provider = deps.provider ?? paymentProvider();
  const jobs: Job[] = [
    { name: "completer", everyMs: 2_000, run: () => completeAbandonedPayments({ prisma, provider }) },
    { name: "counters", everyMs: 5_000, run: () => counters.flush(prisma) },
    { name: "sweep", everyMs: 60_000, run: () => sweepExpiredKeys(prisma) },
    { name: "reconciler", everyMs: 10 * 60_000, run: () => runReconciliation({ prisma, provider }) },
  ];
  const running = new Set<Promise<unknown>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const p = job
        .run()
        .catch((error: unknown) => console.warn(`background job ${job.name} failed:`, error))
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    }, job.everyMs);
    timer.unref();
    return timer;
  });
  return async () => {
    for (const t of timers) clearInterval(t);
    await Promise.allSettled(running);
  };
}
