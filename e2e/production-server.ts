import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createPrismaClient } from "../server/db";
import { applyMigrations } from "../server/db/migrate";
import { seedDemoData } from "../server/seed";

// The app as production runs it (APP_ENV=production) on a database of its own that development
// seeded first, for e2e/production.spec.ts. Uses the build of the first web server; only the
// variables production needs are set, the secrets fresh for every run (the admin token from
// playwright.config.ts, which the spec reads too).
const base = process.env.DATABASE_URL;
if (!base)
  throw new Error("DATABASE_URL is not set: the production e2e server makes its database beside it.");
const url = new URL(base);
const name = `${url.pathname.slice(1) || "postgres"}_production_e2e`;
// Databases are made and migrated on a session of their own (DIRECT_DATABASE_URL), not through
// the pooler, when the tests run behind one.
const direct = process.env.DIRECT_DATABASE_URL ? new URL(process.env.DIRECT_DATABASE_URL) : null;
const admin = new pg.Client({ connectionString: (direct ?? url).toString() });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
await admin.query(`CREATE DATABASE "${name}"`);
await admin.end();
url.pathname = `/${name}`;
if (direct) direct.pathname = `/${name}`;

// First as development leaves it: migrated and seeded with the demo customers, their public API
// keys and password. The production start must disable them (and says so on its output).
const seeded = createPrismaClient((direct ?? url).toString());
await applyMigrations((direct ?? url).toString());
await seedDemoData(seeded, { production: false });
await seeded.$disconnect();

const child = spawn("node_modules/.bin/tsx", ["scripts/start.ts"], {
  stdio: "inherit",
  env: {
    ...process.env,
    APP_ENV: "production",
    DATABASE_URL: url.toString(),
    ...(direct ? { DIRECT_DATABASE_URL: direct.toString() } : {}),
    ADMIN_TOKEN: process.env.E2E_PRODUCTION_ADMIN_TOKEN ?? randomBytes(32).toString("base64url"),
    SESSION_SECRET: randomBytes(32).toString("base64url"),
    BACKGROUND_JOBS: "off",
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => child.kill(signal));
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
