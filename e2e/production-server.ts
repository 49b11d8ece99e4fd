import { randomBytes } from "node:crypto";
import { createPrismaClient } from "../server/db";
import { applyMigrations } from "../server/db/migrate";
import { seedDemoData } from "../server/seed";
import { startServerBeside } from "./server-beside";

// The app as production runs it (APP_ENV=production) on a database of its own that development
// seeded first, for e2e/production.spec.ts. Uses the build of the first web server; only the
// variables production needs are set, the secrets fresh for every run (the admin token from
// playwright.config.ts, which the spec reads too).
await startServerBeside(
  "production_e2e",
  {
    APP_ENV: "production",
    ADMIN_TOKEN: process.env.E2E_PRODUCTION_ADMIN_TOKEN ?? randomBytes(32).toString("base64url"),
    SESSION_SECRET: randomBytes(32).toString("base64url"),
    BACKGROUND_JOBS: "off",
  },
  // First as development leaves it: migrated and seeded with the demo customers, their public API
  // keys and password. The production start must disable them (and says so on its output).
  async (databaseUrl) => {
    await applyMigrations(databaseUrl);
    const seeded = createPrismaClient(databaseUrl);
    await seedDemoData(seeded, { production: false });
    await seeded.$disconnect();
  },
);
