import { describe, expect, it } from "vitest";
import { parseEnv } from "./env";

// Random-looking values of production strength (never used anywhere else).
const STRONG = "kQ3v9Zp1xW7mR2tB8nY4cL6hJ0sD5fGa";
const STRONG_TOO = "Uu8Ee2Rr4Tt6Yy1Ii3Oo5Pp7Aa9Ss0Dd-Ff";

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
    expect(() => parseEnv({ APP_ENV: "production" })).toThrow(
      /ADMIN_TOKEN: is required[\s\S]*SESSION_SECRET: is required/,
    );
    const env = parseEnv({ APP_ENV: "production", ADMIN_TOKEN: STRONG, SESSION_SECRET: STRONG_TOO });
    expect([env.ADMIN_TOKEN, env.SESSION_SECRET, env.isProduction]).toEqual([STRONG, STRONG_TOO, true]);
  });

  it("refuses weak or development secrets in production, naming each", () => {
    const prod = (vars: Record<string, string>) =>
      parseEnv({ APP_ENV: "production", ADMIN_TOKEN: STRONG, SESSION_SECRET: STRONG_TOO, ...vars });
    expect(() => prod({ ADMIN_TOKEN: "admin_test" })).toThrow(/ADMIN_TOKEN: is a known development default/);
    expect(() => prod({ SESSION_SECRET: "dev-only-session-secret-not-for-production" })).toThrow(
      /SESSION_SECRET: is a known development default/,
    );
    expect(() => prod({ METRICS_TOKEN: "metrics_test" })).toThrow(
      /METRICS_TOKEN: is a known development default/,
    );
    expect(() => prod({ ADMIN_TOKEN: "a-long-admin-token" })).toThrow(/ADMIN_TOKEN: is shorter than 32/);
    expect(() => prod({ SESSION_SECRET: "s".repeat(40) })).toThrow(/SESSION_SECRET: has too few distinct/);
    expect(() => prod({ ADMIN_TOKEN: "change-me-to-32-random-characters-please" })).toThrow(
      /ADMIN_TOKEN: is a known development default/,
    );
    // Outside production the same values are accepted: development needs no configuration.
    expect(parseEnv({ ADMIN_TOKEN: "admin_test" }).ADMIN_TOKEN).toBe("admin_test");
  });

  it("is production wherever NODE_ENV=production (next start, node server.js) unless APP_ENV=development", () => {
    expect(() => parseEnv({ NODE_ENV: "production" })).toThrow(/ADMIN_TOKEN: is required/);
    const prod = parseEnv({ NODE_ENV: "production", ADMIN_TOKEN: STRONG, SESSION_SECRET: STRONG_TOO });
    expect([prod.APP_ENV, prod.isProduction, prod.METRICS_TOKEN]).toEqual(["production", true, undefined]);
    // "test" is no way around it either; only development, asked for by name.
    expect(
      parseEnv({ NODE_ENV: "production", APP_ENV: "test", ADMIN_TOKEN: STRONG, SESSION_SECRET: STRONG_TOO })
        .APP_ENV,
    ).toBe("production");
    const dev = parseEnv({ NODE_ENV: "production", APP_ENV: "development" });
    expect([dev.APP_ENV, dev.ADMIN_TOKEN]).toEqual(["development", "admin_test"]);
    expect(() => parseEnv({ NODE_ENV: "production", APP_ENV: "staging" })).toThrow(/APP_ENV/);
    // `next build` serves nothing: production without secrets, and none of development's.
    const build = parseEnv({ NODE_ENV: "production", NEXT_PHASE: "phase-production-build" });
    expect(build.isProduction).toBe(true);
    expect([build.ADMIN_TOKEN, build.SESSION_SECRET]).not.toContain("admin_test");
    expect(build.SESSION_SECRET).not.toBe(parseEnv({}).SESSION_SECRET);
  });

  it("refuses one secret reused for another, and typed sequences", () => {
    const prod = (vars: Record<string, string>) =>
      parseEnv({ APP_ENV: "production", ADMIN_TOKEN: STRONG, SESSION_SECRET: STRONG_TOO, ...vars });
    expect(() => prod({ METRICS_TOKEN: STRONG })).toThrow(/METRICS_TOKEN: must differ from ADMIN_TOKEN/);
    expect(() => prod({ SESSION_SECRET: STRONG })).toThrow(/SESSION_SECRET: must differ from ADMIN_TOKEN/);
    expect(() => prod({ METRICS_TOKEN: `${STRONG_TOO}-metrics` })).toThrow(
      /METRICS_TOKEN: must differ from SESSION_SECRET/,
    );
    // Development's own defaults differ; what a developer sets there is not checked.
    expect(parseEnv({ ADMIN_TOKEN: "same-in-dev", METRICS_TOKEN: "same-in-dev" }).METRICS_TOKEN).toBe(
      "same-in-dev",
    );
    for (const typed of [
      "abcdefghijklmnopqrstuvwxyz0123456789",
      "ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210",
      "qwertyuiopasdfghjklzxcvbnm1234567890",
    ])
      expect(() => prod({ ADMIN_TOKEN: typed }), typed).toThrow(/ADMIN_TOKEN: looks like a typed sequence/);
  });

  it("believes no forwarded address unless told how many proxies append one", () => {
    expect(parseEnv({}).TRUSTED_PROXY_HOPS).toBe(0);
    expect(parseEnv({ TRUSTED_PROXY_HOPS: "1" }).TRUSTED_PROXY_HOPS).toBe(1);
    expect(() => parseEnv({ TRUSTED_PROXY_HOPS: "-1" })).toThrow(/TRUSTED_PROXY_HOPS/);
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
    const prod = parseEnv({ APP_ENV: "production", ADMIN_TOKEN: STRONG, SESSION_SECRET: STRONG_TOO });
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
