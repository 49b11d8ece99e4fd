import { installPeerAddress } from "../auth/peer-address";
import { env } from "../env";
import { stopInOrder } from "./stop-in-order";

/**
 * The Node.js server's share of instrumentation: the environment checked on import (production
 * without its secrets stops here), the socket's address on every request (decision 0145), the background jobs in-process by default
 * (BACKGROUND_JOBS=off leaves them to `npm run worker`), counters flushed by every server (so
 * /api/metrics sums all of them), and the ordered stop on SIGTERM, whatever started the server.
 */
export async function startNodeServer(): Promise<void> {
  installPeerAddress();
  const stopJobs = await startServerJobs();
  stopInOrder({ stopJobs, delayMs: env.SHUTDOWN_DELAY_SECONDS * 1000 });
}

/** What runs beside a server's requests (Next's or the API tier's); resolves to its stop. */
export async function startServerJobs(): Promise<() => Promise<void>> {
  if (!process.env.DATABASE_URL) return async () => {};
  // No provider configured (neither the simulator's URL nor a key for Stripe itself): no jobs.
  const provider = process.env.PAYMENT_PROVIDER_URL || process.env.PAYMENT_PROVIDER_SECRET;
  if (process.env.BACKGROUND_JOBS === "off" || !provider) {
    const [{ db }, { startCounterFlush }] = await Promise.all([import("../db"), import("../keys")]);
    return startCounterFlush(db());
  }
  const { startBackgroundJobs } = await import("../jobs");
  return startBackgroundJobs();
}
