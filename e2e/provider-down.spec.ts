import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { freePort } from "../scripts/lib/guarded-process";
import { waitForHealth } from "../scripts/lib/health-wait";
import { bearer, payRest, payTrpc } from "./api";

/**
 * The production build with its payment provider down (e2e/provider-down-server.ts), started
 * here for these tests alone. The background jobs built the provider client in another layer's
 * copy of the modules than the route handlers': its errors must still be recognised there
 * (docs/decisions/0095).
 */
const ADMIN_TOKEN = "admin_provider_down";
/** Low, so the throttled answer is reached in a few requests. */
const PAYMENTS_PER_MINUTE = 4;

let server: ChildProcess;
let request: APIRequestContext;
let log = "";

test.beforeAll(async ({ playwright }) => {
  test.setTimeout(120_000);
  const port = await freePort();
  server = spawn("node_modules/.bin/tsx", ["e2e/provider-down-server.ts"], {
    env: {
      ...process.env,
      PORT: String(port),
      CHECKOUT_INSTANCE: "test",
      ADMIN_TOKEN,
      RATE_LIMIT_PAYMENTS_PER_MINUTE: String(PAYMENTS_PER_MINUTE),
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group: the stack it starts goes with it
  });
  const collect = (d: Buffer) => {
    log += d.toString();
  };
  server.stdout?.on("data", collect);
  server.stderr?.on("data", collect);
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(`${base}/api/health/ready`, 100_000).catch((error: unknown) => {
    throw new Error(`the provider-down server did not start: ${error}\n${log}`);
  });
  request = await playwright.request.newContext({ baseURL: base });
});

test.afterAll(async () => {
  await request?.dispose();
  if (server?.exitCode === null) {
    const exited = new Promise((r) => server.once("exit", r));
    process.kill(-(server.pid as number), "SIGTERM");
    await exited;
  }
});

async function newOrder(token: "sk_test_alice" | "sk_test_bob" = "sk_test_alice") {
  const res = await request.post("/api/trpc/orders.create", {
    headers: bearer(token),
    data: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
  });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()).result.data.id as string;
}

const waitRetryAfter = (seconds: string | undefined) =>
  new Promise((r) => setTimeout(r, Number(seconds ?? 1) * 1000 + 200));

test("a payment is 503 with Retry-After on both surfaces, never stored, while the provider is down", async () => {
  const orderId = await newOrder();
  const key = randomUUID();
  const viaTrpc = await payTrpc(request, orderId, key);
  expect(viaTrpc.status(), await viaTrpc.text()).toBe(503);
  expect((await viaTrpc.json()).error.data.code).toBe("SERVICE_UNAVAILABLE");
  expect(Number(viaTrpc.headers()["retry-after"])).toBeGreaterThanOrEqual(1);

  await waitRetryAfter(viaTrpc.headers()["retry-after"]);
  const viaRest = await payRest(request, orderId, key);
  expect(viaRest.status(), await viaRest.text()).toBe(503);
  expect(await viaRest.json()).toMatchObject({ type: "/docs/problems#provider-unavailable", status: 503 });
  expect(Number(viaRest.headers()["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(viaRest.headers()["idempotent-replayed"]).toBeUndefined();
});

test("admin.reconcile.run answers a report that names the provider error, and it becomes the latest", async () => {
  const asAdmin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const run = await request.post("/api/trpc/admin.reconcile.run", { headers: asAdmin, data: {} });
  expect(run.status(), await run.text()).toBe(200);
  const report = (await run.json()).result.data;
  expect(report.providerError).toEqual(expect.stringMatching(/\S/));
  expect(report.chargesChecked).toBe(0);

  const latest = await request.get("/api/trpc/admin.reconcile.latest", { headers: asAdmin });
  expect(latest.status()).toBe(200);
  expect((await latest.json()).result.data).toMatchObject({
    id: report.id,
    providerError: report.providerError,
  });
});

test("past its payments per minute a customer is throttled: 429 with Retry-After on both surfaces", async () => {
  const asBob = bearer("sk_test_bob");
  // Orders that do not exist: each payment is a new key (it spends a point) answered 404.
  const attempt = (i: number) =>
    (i % 2 === 0 ? payRest : payTrpc)(request, randomUUID(), randomUUID(), "pm_card_visa", asBob);
  const statuses: number[] = [];
  for (let i = 0; i < PAYMENTS_PER_MINUTE; i++) statuses.push((await attempt(i)).status());
  expect(statuses).toEqual(Array(PAYMENTS_PER_MINUTE).fill(404));

  for (const surface of [0, 1]) {
    const throttled = await attempt(surface);
    expect(throttled.status(), await throttled.text()).toBe(429);
    expect(Number(throttled.headers()["retry-after"])).toBeGreaterThanOrEqual(1);
  }
});
