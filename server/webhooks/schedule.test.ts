import { describe, expect, it } from "vitest";
import { parseEnv } from "../env";
import { retryAfterSeconds, retryDelaySeconds, SPEC_RETRY_SCHEDULE_SECONDS } from "./schedule";

describe("the retry schedule", () => {
  it("is Standard Webhooks' by default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the first", () => {
    expect(parseEnv({}).WEBHOOK_RETRY_SCHEDULE_SECONDS).toEqual([...SPEC_RETRY_SCHEDULE_SECONDS]);
    expect(parseEnv({ WEBHOOK_RETRY_SCHEDULE_SECONDS: "0.1, 0.2" }).WEBHOOK_RETRY_SCHEDULE_SECONDS).toEqual([
      0.1, 0.2,
    ]);
    expect(() => parseEnv({ WEBHOOK_RETRY_SCHEDULE_SECONDS: "5,soon" })).toThrow(
      /WEBHOOK_RETRY_SCHEDULE_SECONDS/,
    );
  });

  it("jitters each delay within ±10 %, and ends after the last", () => {
    const schedule = SPEC_RETRY_SCHEDULE_SECONDS;
    expect(retryDelaySeconds(1, schedule, () => 0)).toBeCloseTo(4.5);
    expect(retryDelaySeconds(1, schedule, () => 1)).toBeCloseTo(5.5);
    expect(retryDelaySeconds(7, schedule, () => 0.5)).toBeCloseTo(36_000);
    expect(retryDelaySeconds(8, schedule)).toBeNull();
  });

  it("reads Retry-After as seconds or as an HTTP date, capped", () => {
    const now = new Date("2026-12-05T10:00:00Z");
    expect(retryAfterSeconds("120", now, 36_000)).toBe(120);
    expect(retryAfterSeconds("Sat, 05 Dec 2026 10:01:00 GMT", now, 36_000)).toBe(60);
    expect(retryAfterSeconds("Sat, 05 Dec 2026 09:00:00 GMT", now, 36_000)).toBe(0);
    expect(retryAfterSeconds("999999", now, 36_000)).toBe(36_000);
    expect(retryAfterSeconds("later", now, 36_000)).toBeNull();
    expect(retryAfterSeconds(null, now, 36_000)).toBeNull();
  });

  it("allows loopback outside production only, unless told", () => {
    expect(parseEnv({}).WEBHOOK_ALLOW_LOOPBACK).toBe("on");
    const production = {
      APP_ENV: "production",
      ADMIN_TOKEN: "Zq8vX2mL9pR4tY7wB3nK6cF1hJ5dG0sA",
      SESSION_SECRET: "Hq2Wz8Lm4Xc7Vb1Nk9Pt3Rs6Yd5Gf0Ja",
    };
    expect(parseEnv(production).WEBHOOK_ALLOW_LOOPBACK).toBe("off");
    expect(parseEnv({ ...production, WEBHOOK_ALLOW_LOOPBACK: "on" }).WEBHOOK_ALLOW_LOOPBACK).toBe("on");
  });
});
