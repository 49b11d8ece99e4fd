import type { TransportOptions } from "../../outbox/transport";

/**
 * Transport settings for tests: an unacknowledged delivery comes back within a few seconds, and
 * retries never run out during a soak. Every test process declares the queues with these (the
 * last declaration wins), so in-process and child-process tests agree.
 */
export const FAST_TRANSPORT: Omit<TransportOptions, "connectionString"> = {
  ackTimeoutSeconds: 1,
  retryDelaySeconds: 1,
  // Flat: under a loaded CI a pass can outlast the 1 s ack timeout, and a delivery that expired
  // five times would otherwise wait 32–64 s before its next try (the soak's drain took 60 s once).
  retryBackoff: false,
  retryLimit: 100,
  maintenanceIntervalSeconds: 1,
  poolSize: 3,
};
export const FAST_POLL = { idleMs: 100 } as const;

export function testDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is required");
  return url;
}
