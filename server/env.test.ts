import { describe, expect, it } from "vitest";
import { parseEnv } from "./env";

describe("the environment", () => {
  it("has demo defaults outside production", () => {
    const env = parseEnv({});
    expect([env.APP_ENV, env.ADMIN_TOKEN, env.PORT, env.isProduction]).toEqual([
      "development",
      "admin_test",
      3000,
      false,
    ]);
    expect([env.RATE_LIMIT_PAYMENTS_PER_MINUTE, env.RATE_LIMIT_ORDERS_PER_MINUTE]).toEqual([30, 60]);
  });

  it("fails on a bad value with a message naming the variable", () => {
    expect(() => parseEnv({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => parseEnv({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL/);
    expect(() => parseEnv({ APP_ENV: "staging" })).toThrow(/APP_ENV/);
    expect(() => parseEnv({ RATE_LIMIT_PAYMENTS_PER_MINUTE: "0" })).toThrow(/RATE_LIMIT_PAYMENTS_PER_MINUTE/);
    expect(() => parseEnv({ RATE_LIMIT_ORDERS_PER_MINUTE: "many" })).toThrow(/RATE_LIMIT_ORDERS_PER_MINUTE/);
  });

  it("requires the admin token and session secret in production, and invents neither", () => {
    expect(() => parseEnv({ APP_ENV: "production" })).toThrow(/ADMIN_TOKEN[\s\S]*SESSION_SECRET/);
    const env = parseEnv({
      APP_ENV: "production",
      ADMIN_TOKEN: "a-long-admin-token",
      SESSION_SECRET: "s".repeat(32),
    });
    expect([env.ADMIN_TOKEN, env.isProduction]).toEqual(["a-long-admin-token", true]);
  });

  it("takes a direct URL for session work only beside DATABASE_URL", () => {
    const direct = "postgresql://app@db:5432/checkout";
    const pooled = "postgresql://app@pgbouncer:6432/checkout";
    expect(parseEnv({ DATABASE_URL: pooled, DIRECT_DATABASE_URL: direct }).DIRECT_DATABASE_URL).toBe(direct);
    expect(() => parseEnv({ DIRECT_DATABASE_URL: direct })).toThrow(
      /DIRECT_DATABASE_URL: needs DATABASE_URL/,
    );
    expect(() => parseEnv({ DATABASE_URL: pooled, DIRECT_DATABASE_URL: "mysql://x" })).toThrow(
      /DIRECT_DATABASE_URL/,
    );
  });

  it("has a metrics token and readable logs in development; no metrics token and JSON logs in production", () => {
    const dev = parseEnv({});
    expect([dev.METRICS_TOKEN, dev.LOG_FORMAT, dev.LOG_LEVEL]).toEqual(["metrics_test", "pretty", "info"]);
    const prod = parseEnv({
      APP_ENV: "production",
      ADMIN_TOKEN: "a-long-admin-token",
      SESSION_SECRET: "s".repeat(32),
    });
    expect([prod.METRICS_TOKEN, prod.LOG_FORMAT]).toEqual([undefined, "json"]);
    expect(() => parseEnv({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => parseEnv({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN/);
  });

  it("treats an empty variable as unset", () => {
    expect(parseEnv({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it("goes below the time floors only for the chaos checker, never in production", () => {
    expect(() => parseEnv({ PAYMENT_ABANDON_AFTER_SECONDS: "5" })).toThrow(/PAYMENT_ABANDON_AFTER_SECONDS/);
    expect(() => parseEnv({ RECONCILE_INTERVAL_SECONDS: "5" })).toThrow(/RECONCILE_INTERVAL_SECONDS/);
    const chaos = parseEnv({
      CHAOS_COMPRESSED_TIME: "on",
      PAYMENT_ABANDON_AFTER_SECONDS: "5",
      RECONCILE_INTERVAL_SECONDS: "5",
    });
    expect([chaos.PAYMENT_ABANDON_AFTER_SECONDS, chaos.RECONCILE_INTERVAL_SECONDS]).toEqual([5, 5]);
    expect(() =>
      parseEnv({
        APP_ENV: "production",
        ADMIN_TOKEN: "a-long-admin-token",
        SESSION_SECRET: "s".repeat(32),
        CHAOS_COMPRESSED_TIME: "on",
        PAYMENT_ABANDON_AFTER_SECONDS: "5",
      }),
    ).toThrow(/PAYMENT_ABANDON_AFTER_SECONDS: must be at least 60/);
    expect(parseEnv({}).RECONCILE_INTERVAL_SECONDS).toBe(600);
  });
});
