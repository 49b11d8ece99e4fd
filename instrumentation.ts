// Next calls register() once per server process: the background jobs run in-process by default
// (BACKGROUND_JOBS=off leaves them to `npm run worker`). Every server flushes its own outcome
// counters, jobs or not, so /api/metrics sums all of them.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || !process.env.DATABASE_URL) return;
  if (process.env.BACKGROUND_JOBS === "off" || !process.env.PAYMENT_PROVIDER_URL) {
    const [{ db }, { startCounterFlush }] = await Promise.all([
      import("./server/db"),
      import("./server/keys"),
    ]);
    startCounterFlush(db());
    return;
  }
  const { startBackgroundJobs } = await import("./server/jobs");
  startBackgroundJobs();
}
