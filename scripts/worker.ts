/**
 * `npm run worker`: the background jobs alone, for a set-up where the web servers run with
 * BACKGROUND_JOBS=off. Without DATABASE_URL / PAYMENT_PROVIDER_URL it attaches to a running
 * `npm run dev` (its embedded database and provider ports).
 */
import { loadDotEnv } from "./lib/dotenv";
import { onStopSignal } from "./lib/stop-signal";

loadDotEnv(false);
process.env.DATABASE_URL ||= "postgresql://postgres:postgres@127.0.0.1:54329/checkout";
process.env.PAYMENT_PROVIDER_URL ||= "http://127.0.0.1:4010";
// Imported after the defaults above, since the env module reads the environment once, on import.
const { startBackgroundJobs } = await import("../server/jobs");
const stopJobs = startBackgroundJobs();
console.log(
  `worker running against ${new URL(process.env.DATABASE_URL).host}, provider ${process.env.PAYMENT_PROVIDER_URL}`,
);
const keepAlive = setInterval(() => {}, 60_000);
onStopSignal(() => {
  clearInterval(keepAlive);
  void stopJobs().then(() => process.exit(0));
});
