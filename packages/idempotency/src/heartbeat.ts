/**
 * Renews an owner's lease while its work runs, so a slow attempt is not mistaken for a dead one,
 * within two bounds:
 * - `stop()` waits for a renewal already on its way, so none lands after the key is settled (a
 *   renewal racing a release with a short hold would stretch the hold into a full lease);
 * - renewals end after `maxLifeSeconds`: an attempt hung that long (on a half-open connection,
 *   say) lets its lease run out, and a retry or the completer takes over, fenced.
 */
export function startHeartbeat(
  renew: () => Promise<unknown>,
  opts: { leaseSeconds: number; maxLifeSeconds: number },
): { stop(): Promise<void> } {
  const deadline = Date.now() + opts.maxLifeSeconds * 1000;
  let inFlight: Promise<unknown> | null = null;
  let stopped = false;
  const timer = setInterval(
    () => {
      if (stopped || inFlight) return;
      if (Date.now() >= deadline) {
        clearInterval(timer);
        return;
      }
      inFlight = renew()
        .catch(() => {
          // A missed renewal only shortens the lease; completion is fenced either way.
        })
        .finally(() => {
          inFlight = null;
        });
    },
    Math.max(1000, (opts.leaseSeconds * 1000) / 3),
  );
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
