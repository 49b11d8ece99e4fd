import { errorField, logger } from "../log";

export interface PollerOptions {
  /** Pause after a pass that found nothing (or not a full batch) to do. */
  idleMs: number;
  /** The pause after a failure doubles from idleMs up to this. */
  maxBackoffMs: number;
}

export interface Poller {
  stop(): Promise<void>;
}

/**
 * Runs `pass` until stopped: again at once while it reports more work, after `idleMs` when it
 * does not, and with a doubling pause after a failure (the database is restarting, say), so a
 * relay or consumer outlives any outage without spinning.
 */
export function startPoller(name: string, pass: () => Promise<boolean>, opts: PollerOptions): Poller {
  let stopped = false;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = (async () => {
    let failures = 0;
    while (!stopped) {
      let more = false;
      try {
        more = await pass();
        failures = 0;
      } catch (error) {
        failures++;
        if (failures === 1 || failures % 10 === 0)
          logger.warn({ job: name, failures, err: errorField(error) }, `${name} failed`);
      }
      if (stopped) break;
      if (failures > 0) await sleep(Math.min(opts.idleMs * 2 ** failures, opts.maxBackoffMs));
      else if (!more) await sleep(opts.idleMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
