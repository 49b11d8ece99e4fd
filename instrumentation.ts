// Next calls register() once per server process, before its first request, whatever started it
// (`next start`, `npm start`, `npm run cluster`, a standalone `node server.js`): the place for
// what every entry point must do (decision 0145). First the socket's address on every request and
// the environment checked (production without its secrets stops here); then the background jobs
// run in-process by default (BACKGROUND_JOBS=off leaves them to `npm run worker`). Every server
// flushes its own outcome counters, jobs or not, so /api/metrics sums all of them.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const [{ installPeerAddress }, { env }] = await Promise.all([
    import("./server/auth/peer-address"),
    import("./server/env"),
  ]);
  installPeerAddress();
  if (!env.DATABASE_URL) return;
  if (env.BACKGROUND_JOBS === "off" || !env.PAYMENT_PROVIDER_URL) {
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
