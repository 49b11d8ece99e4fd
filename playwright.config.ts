import { existsSync } from "node:fs";
import { defineConfig, devices } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3100);
// Debian's Chromium where it exists (browser downloads are impossible on our machines),
// Playwright's own browser elsewhere (`npx playwright install chromium`).
const systemChromium = "/usr/bin/chromium";
const launchOptions = existsSync(systemChromium)
  ? {
      executablePath: systemChromium,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    }
  : {};

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
    url: `http://127.0.0.1:${port}/api/health`,
    env: { PORT: String(port), CHECKOUT_INSTANCE: "test", BACKGROUND_JOBS: "on" },
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
