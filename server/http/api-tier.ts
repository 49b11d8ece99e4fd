import type { AddressInfo } from "node:net";
import { env } from "../env";
import { startServerJobs } from "../lifecycle/node-server";
import { stopInOrder } from "../lifecycle/stop-in-order";
import { createApiServer } from "./node-server";

/**
 * The API tier (decision 0210): the API without Next, as a production server. What Next's
 * instrumentation does for `next start` is done here, from the same modules: the environment
 * checked on import (production without its secrets stops before listening), the socket's
 * address on every request, the background jobs unless BACKGROUND_JOBS=off, and the ordered
 * stop on SIGTERM (readiness 503, SHUTDOWN_DELAY_SECONDS, the jobs, then the listener).
 * Resolves with the URL it listens on.
 */
export async function startApiTier(): Promise<string> {
  const server = createApiServer();
  // As under Next: the jobs and the ordered stop are in place before the first request.
  const stopJobs = await startServerJobs();
  stopInOrder({
    stopJobs,
    delayMs: env.SHUTDOWN_DELAY_SECONDS * 1000,
    close: () => new Promise((closed, failed) => server.close((error) => (error ? failed(error) : closed()))),
  });
  await new Promise<void>((listening, failed) => {
    server.once("error", failed);
    server.listen(env.PORT, env.HOSTNAME, listening);
  });
  const { address, port } = server.address() as AddressInfo;
  const host = env.HOSTNAME ?? (address === "::" || address === "0.0.0.0" ? "127.0.0.1" : address);
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
