import { randomBytes } from "node:crypto";
import { OUTCOMES } from "@idempotent-checkout/idempotency/admin";
import { describe, expect, it } from "vitest";
import { adminCookieName, createAdminSession, endAdminSession } from "../auth/admin-sessions";
import { db } from "../db";
import { env } from "../env";
import { createTestAccount } from "../test/fixtures";
import { counters } from "../test/keys";
import { metricsResponse } from "./metrics";

// Each test scrapes from an address (a /64) of its own, so the wrong tokens of one never throttle another.
const from = () => `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1`;
const scrape = (headers: Record<string, string> = {}, address = from()) =>
  metricsResponse(
    new Request("http://app.test/api/metrics", { headers: { "x-forwarded-for": address, ...headers } }),
    db(),
  );
const ADMIN_COOKIE = adminCookieName(env.isProduction);
const adminSession = () =>
  createAdminSession(db(), { adminToken: env.ADMIN_TOKEN, address: "2001:db8::1", userAgent: null });

function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no sample ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

describe("/api/metrics", () => {
  it("answers 401 without the metrics or admin token, a customer's token or session included", async () => {
    const customer = await createTestAccount("metrics");
    const ended = await adminSession();
    await endAdminSession(db(), ended.id, "test");
    const otherToken = await createAdminSession(db(), {
      adminToken: "another-admin-token-entirely",
      address: "2001:db8::1",
      userAgent: null,
    });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${customer.token}` },
      { authorization: "Bearer not-the-admin-token" },
      { authorization: `Bearer ${env.METRICS_TOKEN}x` },
      { cookie: `${ADMIN_COOKIE}=${randomBytes(32).toString("base64url")}` },
      // Signed out, and made with an ADMIN_TOKEN that is no longer the server's.
      { cookie: `${ADMIN_COOKIE}=${ended.token}` },
      { cookie: `${ADMIN_COOKIE}=${otherToken.token}` },
    ];
    for (const headers of attempts) {
      const res = await scrape(headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(await res.text()).not.toContain("idempotency_outcomes_total");
    }
  });

  it("refuses even the right metrics token to an address that sent too many wrong ones", async () => {
    const address = from();
    expect((await scrape({ authorization: `Bearer ${env.METRICS_TOKEN}` }, address)).status).toBe(200);
    for (let i = 0; i < 10; i++)
      expect((await scrape({ authorization: `Bearer wrong-${i}` }, address)).status).toBe(401);
    expect((await scrape({ authorization: `Bearer ${env.METRICS_TOKEN}` }, address)).status).toBe(401);
    expect((await scrape({ authorization: `Bearer ${env.METRICS_TOKEN}` })).status).toBe(200);
  });

  it("serves outcome counters summed in the database, key, completer and outbox gauges, and process metrics", async () => {
    const before = await (await scrape({ authorization: `Bearer ${env.METRICS_TOKEN}` })).text();
    counters.increment("fingerprint_mismatch", "", 3);
    const res = await scrape({ cookie: `${ADMIN_COOKIE}=${(await adminSession()).token}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const outcome of OUTCOMES) {
      expect(text).toMatch(new RegExp(`^idempotency_outcomes_total\\{outcome="${outcome}"\\} \\d+$`, "m"));
    }
    const series = 'idempotency_outcomes_total{outcome="fingerprint_mismatch"}';
    expect(sample(text, series) - sample(before, series)).toBeGreaterThanOrEqual(3);
    for (const state of ["in_progress", "needs_attention", "abandoned", "completed", "expired"]) {
      expect(text).toMatch(new RegExp(`^idempotency_keys\\{state="${state}"\\} \\d+$`, "m"));
    }
    expect(text).toMatch(/^completer_backlog_keys \d+$/m);
    expect(text).toMatch(/^completer_backlog_oldest_seconds \d+$/m);
    expect(text).toMatch(/^refund_completer_backlog_keys \d+$/m);
    for (const status of ["pending", "succeeded", "failed"])
      expect(text).toMatch(new RegExp(`^refunds\\{status="${status}"\\} \\d+$`, "m"));
    expect(text).toMatch(/^outbox_messages\{state="pending"\} \d+$/m);
    expect(text).toMatch(/^consumer_processed_messages\{consumer="receipts"\} \d+$/m);
    expect(text).toMatch(/^outbox_oldest_pending_age_seconds \d+$/m);
    for (const outcome of ["succeeded", "failed"])
      expect(text).toMatch(new RegExp(`^webhook_deliveries_total\\{outcome="${outcome}"\\} \\d+$`, "m"));
    expect(text).toMatch(/^webhook_delivery_lag_seconds [\d.]+$/m);
    expect(text).toMatch(/^webhook_messages_pending \d+$/m);
    expect(text).toContain("# TYPE idempotency_outcomes_total counter");
    expect(text).toContain("# TYPE http_request_duration_seconds histogram");
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    // The full ledger check is an admin action, not part of every scrape.
    expect(text).not.toContain("ledger_balanced");
  });
});
