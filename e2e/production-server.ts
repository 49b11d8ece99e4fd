import { randomBytes } from "node:crypto";
import { startServerBeside } from "./server-beside";

// The app as production runs it (APP_ENV=production) on an EMPTY database of its own, for
// e2e/production.spec.ts. Only the four variables production needs are set, the secrets fresh
// for every run.
await startServerBeside("production_e2e", {
  APP_ENV: "production",
  ADMIN_TOKEN: randomBytes(24).toString("base64url"),
  SESSION_SECRET: randomBytes(32).toString("base64url"),
  BACKGROUND_JOBS: "off",
});
