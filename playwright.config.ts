import { defineConfig, devices } from "@playwright/test";
import { chromiumLaunchOptions } from "./scripts/lib/browser";

const port = Number(process.env.E2E_PORT ?? 3100);
// Debian's Chromium where it exists, Playwright's own otherwise (`npm test` gets one of them).
const launchOptions = chromiumLaunchOptions();

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
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], launchOptions } }],
  webServer: {
    // The production build, started through the same script as `npm start`.
    command: "node_modules/.bin/next build && node_modules/.bin/tsx scripts/start.ts",
    url: `http://127.0.0.1:${port}/api/health/ready`,
    // Warnings and errors only: a line per request would bury the test report.
    env: {
      PORT: String(port),
      CHECKOUT_INSTANCE: "test",
      BACKGROUND_JOBS: "on",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    },
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
