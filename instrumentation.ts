// Next calls register() once per server process: the background jobs run in-process by default
// (BACKGROUND_JOBS=off leaves them to `npm run worker`).
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  if (process.env.BACKGROUND_JOBS === "off" || !process.env.DATABASE_URL || !process.env.PAYMENT_PROVIDER_URL)
    return;
  const { startBackgroundJobs } = await import("./server/jobs");
  startBackgroundJobs();
}
