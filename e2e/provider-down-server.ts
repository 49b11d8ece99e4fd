import { freePort } from "../scripts/lib/guarded-process";
import { PROVIDER_DOWN } from "./provider-down";
import { startServerBeside } from "./server-beside";

// The app with its payment provider down (a port nothing listens on), on a database of its own,
// for e2e/provider-down.spec.ts. The background jobs are on, as by default: they build the
// process-wide provider client in the instrumentation layer before any request arrives.
const closedPort = await freePort();
await startServerBeside("provider_down_e2e", {
  APP_ENV: "development",
  ADMIN_TOKEN: PROVIDER_DOWN.adminToken,
  PAYMENT_PROVIDER_URL: `http://127.0.0.1:${closedPort}`,
  BACKGROUND_JOBS: "on",
  RATE_LIMIT_PAYMENTS_PER_MINUTE: String(PROVIDER_DOWN.paymentsPerMinute),
});
