import { describe, expect, it } from "vitest";
import { ADMIN_COOKIE, signSession } from "../auth/session";
import { db } from "../db";
import { env } from "../env";
import { counters, OUTCOMES } from "../idempotency";
import { createTestAccount } from "../test/fixtures";
import { metricsResponse } from "./metrics";

const scrape = (headers: Record<string, string> = {}) =>
  metricsResponse(new Request("http://app.test/api/metrics", { headers }), db());

function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no sample ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

describe("/api/metrics", () => {
  it("answers 401 without the metrics or admin token, a customer's token or session included", async () => {
    const customer = await createTestAccount("metrics");
    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${customer.token}` },
      { authorization: "Bearer not-the-admin-token" },
      { authorization: `Bearer ${env.METRICS_TOKEN}x` },
      { cookie: `${ADMIN_COOKIE}=${signSession(env.SESSION_SECRET, "customer", customer.id)}` },
      { cookie: `${ADMIN_COOKIE}=${signSession("another-secret-another-secret-another", "admin", "admin")}` },
    ];
    for (const headers of attempts) {
      const res = await scrape(headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(await res.text()).not.toContain("idempotency_outcomes_total");
    }
  });

  it("serves outcome counters summed in the database, key, completer and outbox gauges, and process metrics", async () => {
    const before = await (await scrape({ authorization: `Bearer ${env.METRICS_TOKEN}` })).text();
    counters.increment("fingerprint_mismatch", 3);
    const res = await scrape({
      cookie: `${ADMIN_COOKIE}=${signSession(env.SESSION_SECRET, "admin", "admin")}`,
    });
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
    expect(text).toMatch(/^outbox_messages\{state="pending"\} \d+$/m);
    expect(text).toMatch(/^consumer_processed_messages\{consumer="receipts"\} \d+$/m);
    expect(text).toMatch(/^outbox_oldest_pending_age_seconds \d+$/m);
    expect(text).toContain("# TYPE idempotency_outcomes_total counter");
    expect(text).toContain("# TYPE http_request_duration_seconds histogram");
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    // The full ledger check is an admin action, not part of every scrape.
    expect(text).not.toContain("ledger_balanced");
  });
});
