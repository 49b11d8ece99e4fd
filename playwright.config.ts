import { randomBytes } from "node:crypto";
import { defineConfig, devices } from "@playwright/test";
import { chromiumLaunchOptions } from "./scripts/lib/browser";

const port = Number(process.env.E2E_PORT ?? 3100);
// The production-mode server (e2e/production-server.ts) listens beside the main one.
const productionPort = port + 1;
// Debian's Chromium where it exists, Playwright's own otherwise (`npm test` gets one of them).
const launchOptions = chromiumLaunchOptions();
// The production server's admin token: fresh per run, set here once so that the server and the
// spec's workers (which inherit this process's environment) share it.
process.env.E2E_PRODUCTION_ADMIN_TOKEN ??= randomBytes(32).toString("base64url");

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  timeout: 60_000,
  // One output folder per port, so two e2e runs in one checkout never delete each other's files.
  outputDir: `test-results/${port}`,
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    launchOptions,
  },
  projects: [
    {
      name: "chromium",
      testIgnore: /production\.spec\.ts/,
      use: { ...devices["Desktop Chrome"], launchOptions },
    },
    {
      // APP_ENV=production on a database of its own that development seeded first.
      name: "production",
      testMatch: /production\.spec\.ts/,
      use: { ...devices["Desktop Chrome"], launchOptions, baseURL: `http://127.0.0.1:${productionPort}` },
    },
  ],
  // Started one after the other: the second uses the first one's build.
  webServer: [
    {
      // The production build (with the standalone server and dist/ the image runs, for
      // deploy.spec.ts), started through the same script as `npm start`.
      command: "npm run --silent build && node_modules/.bin/tsx scripts/start.ts",
      url: `http://127.0.0.1:${port}/api/health/ready`,
      // Warnings and errors only: a line per request would bury the test report. The checkout
      // specs pay many times a minute as one demo customer: limits are not what they test.
      env: {
        PORT: String(port),
        // `npm start` is production by default: these specs use the demo customers.
        APP_ENV: "development",
        CHECKOUT_INSTANCE: "test",
        BACKGROUND_JOBS: "on",
        LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
        RATE_LIMIT_PAYMENTS_PER_MINUTE: "10000",
        RATE_LIMIT_ORDERS_PER_MINUTE: "10000",
        // e2e/webhooks.spec.ts signs with it.
        PAYMENT_PROVIDER_WEBHOOK_SECRETS: "whsec_e2e_only_0123456789abcdef",
        // e2e/three-d-secure.spec.ts waits this long for an abandoned 3-D Secure step to be canceled.
        PAYMENT_ACTION_TIMEOUT_SECONDS: "30",
      },
      reuseExistingServer: !process.env.CI,
      // `next build` runs inside this command: on a busy 2-core machine it alone took 3 minutes.
      timeout: 600_000,
      stdout: "pipe",
      stderr: "pipe",
    },
    {
      command: "node_modules/.bin/tsx e2e/production-server.ts",
      url: `http://127.0.0.1:${productionPort}/api/health/ready`,
      env: {
        PORT: String(productionPort),
        CHECKOUT_INSTANCE: "test",
        LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      },
      reuseExistingServer: !process.env.CI,
      timeout: 120_000,
      stdout: "pipe",
      stderr: "pipe",
    },
  ],
});
