/**
 * Waits `ms`; a wait that began offline ends early when the browser is back online, since
 * the retry then is the quickest way to the answer. Retry-After waits (online) run in full.
 */
export function sleepUnlessBackOnline(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener("online", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (!navigator.onLine) window.addEventListener("online", done);
  });
}
