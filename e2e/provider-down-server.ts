import { freePort } from "../scripts/lib/guarded-process";
import { startServerBeside } from "./server-beside";

// The app with its payment provider down (a port nothing listens on), on a database of its own,
// for e2e/provider-down.spec.ts, which starts it on PORT with the suite's build. The background
// jobs are on, as by default: they build the process-wide provider client in the instrumentation
// layer before any request arrives. ADMIN_TOKEN and the payment limit come from the spec.
const closedPort = await freePort();
await startServerBeside("provider_down_e2e", {
  APP_ENV: "development",
  PAYMENT_PROVIDER_URL: `http://127.0.0.1:${closedPort}`,
  BACKGROUND_JOBS: "on",
});
