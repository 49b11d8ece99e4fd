import { setTimeout as sleep } from "node:timers/promises";
import { errorField, logger } from "../log";

// On globalThis under a Symbol.for key: Next loads this module once per layer (instrumentation,
// route handlers), and they must all see one flag.
const STOPPING = Symbol.for("checkout.stopping");
const store = globalThis as unknown as { [STOPPING]?: boolean };
const SIGNALS = ["SIGTERM", "SIGINT"] as const;
/** Longest wait for the background jobs to reach a safe point before Next stops anyway. */
const JOBS_GRACE_MS = 15_000;

interface StopOptions {
  stopJobs: () => Promise<void>;
  delayMs: number;
  /** A server of our own (not Next's): stops listening and resolves once its requests are answered. */
  close?: () => Promise<void>;
}

/** True once the process has been told to stop: readiness answers 503 from then on. */
export function isStopping(): boolean {
  return store[STOPPING] === true;
}

/**
 * Stops the server in order on SIGTERM or SIGINT (docs/decisions/0151): readiness turns 503, and
 * after `delayMs` (time for a balancer to notice) the background jobs stop at a safe point; then
 * Next's own handler runs, which closes the listener, lets requests in flight finish and exits.
 * Next registers that handler before it loads instrumentation; it is taken over here, so that it
 * runs last, whatever started the server (`npm start`, `next start`, the standalone server.js).
 * The API tier has no such handler: it passes `close` (its listener closed, requests in flight
 * finished), and the process exits once that is done.
 */
export function stopInOrder(opts: StopOptions): void {
  for (const signal of SIGNALS) {
    const nextHandlers = process.listeners(signal);
    process.removeAllListeners(signal);
    process.on(signal, () => void stop(signal, nextHandlers, opts));
  }
}

async function stop(
  signal: NodeJS.Signals,
  nextHandlers: NodeJS.SignalsListener[],
  opts: StopOptions,
): Promise<void> {
  if (store[STOPPING]) return; // Ctrl-C reaches the whole group, and a supervisor may signal again
  store[STOPPING] = true;
  logger.info({ signal, delayMs: opts.delayMs }, "stopping: readiness answers 503");
  if (opts.delayMs > 0) await sleep(opts.delayMs);
  const jobs = opts.stopJobs().then(
    () => "stopped",
    (error: unknown) => logger.error({ err: errorField(error) }, "background jobs did not stop cleanly"),
  );
  const outcome = await Promise.race([jobs, sleep(JOBS_GRACE_MS, "timed out", { ref: false })]);
  logger.info(
    { jobs: outcome },
    "background jobs stopped; closing the listener, finishing requests in flight",
  );
  if (opts.close) {
    await opts
      .close()
      .catch((error: unknown) =>
        logger.error({ err: errorField(error) }, "the listener did not close cleanly"),
      );
    process.exit(0);
  }
  if (nextHandlers.length === 0) process.exit(0); // no server of Next's here: nothing more to finish
  for (const handler of nextHandlers) handler(signal);
}
