import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    // .next-* too: a build in another folder (npm run chaos, the benchmarks) ships its own test files.
    exclude: [
      "**/node_modules/**",
      "e2e/**",
      ".next/**",
      ".next-*/**",
      ".data/**",
      "dist/**",
      "packages/*/dist/**",
    ],
    globalSetup: ["server/test/global-setup.ts"],
    setupFiles: ["server/test/fail-on-console-error.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A line per request would bury the test output; warnings and errors still show. Soaks pay
    // hundreds of times for one account; server/limits/limits.test.ts sets its own limit.
    env: {
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      RATE_LIMIT_PAYMENTS_PER_MINUTE: "1000000",
      RATE_LIMIT_ORDERS_PER_MINUTE: "1000000",
    },
  },
});
