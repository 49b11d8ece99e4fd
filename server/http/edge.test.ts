import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect } from "vitest";
import { MAX_BATCH_CALLS } from "../../shared/batch-limit";
import { db } from "../db";
import { env } from "../env";
import { createLogger } from "../log";
import { appRouter } from "../root";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { it, type TestProvider } from "../test/vitest";
import { metricsResponse } from "./metrics";
import { handleTrpcRequest } from "./trpc-handler";

// The log lines of the requests this file sends, as JSON, exactly as they would reach stdout.
let lines: string[] = [];
const log = createLogger({
  level: "info",
  format: "json",
  destination: new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  }),
});
const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

let provider: TestProvider;
let alice: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  alice = await createTestAccount("edge");
});

function call(path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) {
  const req = new Request(`http://app.test/api/trpc/${path}`, {
    method: init.body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return handleTrpcRequest(req, appRouter, { log, provider: provider.client });
}

async function newOrder(): Promise<string> {
  const res = await call("orders.create", {
    body: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
    headers: { authorization: `Bearer ${alice.token}` },
  });
  return (await res.json()).result.data.id;
}

describe("one log line per request", () => {
  it("carries the request id, procedure, status, duration and the key's row id, fence and outcome; never a secret", async () => {
    const key = randomUUID();
    const headers = { authorization: `Bearer ${alice.token}`, "idempotency-key": key };
    const orderId = await newOrder();
    const input = { orderId, paymentMethod: "pm_card_visa" };
    lines = [];
    const first = await call("payments.create", {
      body: input,
      headers: { ...headers, "x-request-id": "req-1" },
    });
    const again = await call("payments.create", {
      body: input,
      headers: { ...headers, "x-request-id": "req-2" },
    });
    const other = await call("payments.create", {
      body: { ...input, paymentMethod: "pm_card_declined" },
      headers: { ...headers, "x-request-id": "req-3" },
    });
    expect([first.status, again.status, other.status]).toEqual([200, 200, 422]);
    expect(first.headers.get("x-request-id")).toBe("req-1");

    const [row] = await db().$queryRaw<{ id: bigint }[]>`
      SELECT id FROM idempotency_keys WHERE account_id = ${alice.id}::uuid AND key = ${key}`;
    const keyId = String(row?.id);
    const entries = logged();
    expect(entries).toHaveLength(3);
    expect(entries.map((e) => [e.requestId, e.procedure, e.status, e.idempotency])).toEqual([
      ["req-1", "payments.create", 200, { keyId, fence: 1, outcome: "completed" }],
      ["req-2", "payments.create", 200, { keyId, fence: 1, outcome: "replayed" }],
      ["req-3", "payments.create", 422, { keyId, fence: 1, outcome: "fingerprint_mismatch" }],
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ level: 30, msg: "request", method: "POST" });
      expect(e.durationMs).toEqual(expect.any(Number));
    }
    const text = lines.join("");
    for (const secret of [alice.token, key, "pm_card_visa", "pm_card_declined", orderId])
      expect(text).not.toContain(secret);
  });

  it("logs a duplicate that finds the key in flight as a 409 with the key's row id", async () => {
    const key = randomUUID();
    const headers = { authorization: `Bearer ${alice.token}`, "idempotency-key": key };
    const input = { orderId: await newOrder(), paymentMethod: "pm_card_slow" };
    lines = [];
    const slow = call("payments.create", { body: input, headers: { ...headers, "x-request-id": "slow" } });
    let row: { id: bigint } | undefined;
    while (!row) {
      await new Promise((r) => setTimeout(r, 20));
      [row] = await db().$queryRaw<{ id: bigint }[]>`
        SELECT id FROM idempotency_keys WHERE account_id = ${alice.id}::uuid AND key = ${key}`;
    }
    const duplicate = await call("payments.create", {
      body: input,
      headers: { ...headers, "x-request-id": "dup" },
    });
    expect([duplicate.status, (await slow).status]).toEqual([409, 200]);
    const byId = Object.fromEntries(logged().map((e) => [e.requestId, e]));
    expect(byId.dup).toMatchObject({
      status: 409,
      idempotency: { keyId: String(row.id), fence: 1, outcome: "conflict_in_flight" },
    });
    expect(byId.slow).toMatchObject({
      status: 200,
      idempotency: { keyId: String(row.id), outcome: "completed" },
    });
  });

  it("gives a request without a usable X-Request-Id a fresh one, and logs requests that fail early", async () => {
    lines = [];
    const res = await call("payments.create", {
      body: {},
      headers: { authorization: `Bearer ${alice.token}`, "x-request-id": "not ok\u0007" },
    });
    expect(res.status).toBe(400);
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(logged()).toEqual([
      expect.objectContaining({ requestId: id, status: 400, procedure: "payments.create" }),
    ]);
  });
});

describe("/api/metrics after a payment", () => {
  it("shows a latency histogram for payments.create", async () => {
    const orderId = await newOrder();
    const res = await call("payments.create", {
      body: { orderId, paymentMethod: "pm_card_visa" },
      headers: { authorization: `Bearer ${alice.token}`, "idempotency-key": randomUUID() },
    });
    expect(res.status).toBe(200);
    const scrape = await metricsResponse(
      new Request("http://app.test/api/metrics", {
        headers: { authorization: `Bearer ${env.METRICS_TOKEN}` },
      }),
      db(),
    );
    const text = await scrape.text();
    const series = (suffix: string) =>
      new RegExp(
        `^http_request_duration_seconds_${suffix}\\{[^}]*procedure="payments.create",status="200"[^}]*\\} (\\S+)$`,
        "m",
      );
    expect(Number(series("count").exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(series("sum").exec(text)?.[1])).toBeGreaterThan(0);
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{le="0\.1",procedure="payments.create",status="200"\} \d+$/m,
    );
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{le="\+Inf",procedure="payments.create",status="200"\} [1-9]\d*$/m,
    );
  });
});

describe("bad input at the edge", () => {
  const asAdmin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
  const getKey = (id: string) =>
    call(`admin.keys.get?input=${encodeURIComponent(JSON.stringify({ id }))}`, { headers: asAdmin });

  it("answers 400 to a key id above the int8 range, 404 to one inside it", async () => {
    for (const id of ["9223372036854775808", "9999999999999999999", "0"]) {
      const res = await getKey(id);
      expect([res.status, (await res.json()).error.data.code], id).toEqual([400, "BAD_REQUEST"]);
    }
    expect((await getKey("9223372036854775807")).status).toBe(404);
  });

  it(`refuses a batch of more than ${MAX_BATCH_CALLS} calls with 400, and runs one at the cap`, async () => {
    const batch = (n: number) => {
      const paths = Array.from({ length: n }, () => "catalog.list").join(",");
      return call(`${paths}?batch=1&input=${encodeURIComponent(JSON.stringify({}))}`);
    };
    const over = await batch(MAX_BATCH_CALLS + 1);
    expect(over.status).toBe(400);
    expect((await over.json()).error).toMatchObject({
      message: `A batch may carry at most ${MAX_BATCH_CALLS} calls; this one has ${MAX_BATCH_CALLS + 1}.`,
      data: { code: "BAD_REQUEST", httpStatus: 400 },
    });
    const atCap = await batch(MAX_BATCH_CALLS);
    expect(atCap.status).toBe(200);
    expect(await atCap.json()).toHaveLength(MAX_BATCH_CALLS);
  });

  it("refuses an oversized batch of non-idempotent mutations before running any", async () => {
    const before = await db().order.count({ where: { accountId: alice.id } });
    const n = MAX_BATCH_CALLS + 1;
    const paths = Array.from({ length: n }, () => "orders.create").join(",");
    const body = Object.fromEntries(
      Array.from({ length: n }, (_, i) => [i, { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] }]),
    );
    const res = await call(`${paths}?batch=1`, { body, headers: { authorization: `Bearer ${alice.token}` } });
    expect(res.status).toBe(400);
    expect(await db().order.count({ where: { accountId: alice.id } })).toBe(before);
  });
});
