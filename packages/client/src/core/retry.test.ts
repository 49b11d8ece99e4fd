import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY, parseRetryAfter, retryDelay, verdictFor } from "./retry.js";

describe("verdictFor: the one list of final answers", () => {
  it("retries no answer, 429, every 5xx, and 409 or 422 when the server says when to come back", () => {
    expect(verdictFor(undefined, undefined)).toEqual({
      retry: true,
      reason: "network",
      retryAfterMs: undefined,
    });
    for (const status of [429, 500, 502, 503, 504])
      expect(verdictFor(status, undefined), String(status)).toEqual({
        retry: true,
        reason: "server",
        retryAfterMs: undefined,
      });
    expect(verdictFor(409, 1000)).toEqual({ retry: true, reason: "in_flight", retryAfterMs: 1000 });
    expect(verdictFor(422, 1000)).toEqual({ retry: true, reason: "in_flight", retryAfterMs: 1000 });
    expect(verdictFor(503, 2000)).toEqual({ retry: true, reason: "server", retryAfterMs: 2000 });
  });

  it("never retries a final answer: 402, 422 and 409 without Retry-After (stored), other 4xx", () => {
    for (const status of [400, 401, 402, 403, 404, 409, 413, 415, 422])
      expect(verdictFor(status, undefined), String(status)).toEqual({ retry: false });
    // Retry-After on another final answer does not make it retryable.
    expect(verdictFor(402, 1000)).toEqual({ retry: false });
    expect(verdictFor(400, 1000)).toEqual({ retry: false });
  });
});

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates, and ignores what is neither", () => {
    const now = Date.parse("2026-12-03T10:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Thu, 03 Dec 2026 10:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Thu, 03 Dec 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-1", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe("retryDelay: exponential backoff with full jitter", () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };

  it("draws uniformly below a ceiling that doubles per retry and stops at the maximum", () => {
    expect([0, 1, 2, 3, 4, 10].map((retry) => retryDelay(retry, undefined, policy, () => 0.999999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(retryDelay(5, undefined, policy, () => 0)).toBe(0);
  });

  it("spreads waits over the whole range (full jitter, not a fixed step)", () => {
    const draws = Array.from({ length: 2000 }, () => retryDelay(3, undefined, policy));
    expect(Math.min(...draws)).toBeLessThan(100);
    expect(Math.max(...draws)).toBeGreaterThan(700);
  });

  it("never waits less than Retry-After", () => {
    expect(retryDelay(0, 1000, policy, () => 0.5)).toBe(1000);
    expect(retryDelay(4, 300, policy, () => 0.9)).toBe(900);
  });
});
