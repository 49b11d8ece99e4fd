/**
 * Calls `stop` on the first SIGINT or SIGTERM and ignores the ones after it. Ctrl-C reaches the
 * whole process group (and tsx relays it again): with `process.once`, the second signal took
 * Node's default and ended the process in the middle of stopping.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      stop(signal);
    });
}
