import { afterAll, describe, expect } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder, ledgerForOrder, newKey, providerChargesForOrder } from "../test/payments";
import { postPayment, startApiProcess } from "../test/processes";
import { it, type TestProvider } from "../test/vitest";
import { completeAbandonedPayments } from "./operation";

/**
 * A server process killed with SIGKILL right after each recovery point: after phase 1 (the
 * pending payment), and after the provider charged but before phase 3. Whether the client
 * retries with the same key or never comes back (the completer), the order ends with one
 * charge, one balanced ledger transaction and a completed key whose stored response is what a
 * retry sees.
 */
const LEASE_SECONDS = 2;
const CRASH_POINTS = ["after_payment_created", "after_provider_charge"] as const;

let provider: TestProvider;
let api: Awaited<ReturnType<typeof startApiProcess>>;
let account: TestAccount;
const since = new Date(Date.now() - 5000);

it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("crash");
  api = await startApiProcess({
    PAYMENT_PROVIDER_URL: provider.url,
    PAYMENT_LEASE_SECONDS: String(LEASE_SECONDS),
  });
});
afterAll(async () => {
  await api?.stop();
});

async function crashAt(point: string, leaseSeconds = LEASE_SECONDS) {
  const order = await createTestOrder(account);
  const key = newKey();
  const doomed = await startApiProcess({
    PAYMENT_PROVIDER_URL: provider.url,
    PAYMENT_LEASE_SECONDS: String(leaseSeconds),
    CHECKOUT_FAILPOINTS: point,
  });
  const body = { orderId: order.id, paymentMethod: "pm_card_visa" };
  await expect(postPayment(doomed.url, account.token, key, body)).rejects.toThrow();
  expect(await doomed.exited).toBe("SIGKILL");
  const key_ = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
  expect([key_.state, key_.recoveryPoint]).toEqual(["in_progress", "payment_created"]);
  // The crash really came before (phase 1) or after (phase 2) the provider's charge.
  const charged = await providerChargesForOrder(provider.client, order.id, since);
  expect(charged).toHaveLength(point === "after_provider_charge" ? 1 : 0);
  expect(await ledgerForOrder(order.id)).toHaveLength(0);
  return { order, key, body };
}

async function expectOneSettledPayment(orderId: string, key: string, seen: string) {
  expect(await providerChargesForOrder(provider.client, orderId, since)).toHaveLength(1);
  expect(await ledgerForOrder(orderId)).toEqual([expect.objectContaining({ entries: 2, sum: 0 })]);
  const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
  expect(row.state).toBe("completed");
  expect(JSON.parse(seen)).toEqual({ result: { data: (row.responseBody as { data: unknown }).data } });
  const payment = await db().payment.findFirstOrThrow({ where: { orderId } });
  expect(payment.status).toBe("succeeded");
}

async function waitForLease() {
  await new Promise((r) => setTimeout(r, LEASE_SECONDS * 1000 + 300));
}

describe.each(CRASH_POINTS)("SIGKILL %s", (point) => {
  it("the client's retry with the same key finishes it: one charge, one booking", async () => {
    const { order, key, body } = await crashAt(point);
    await waitForLease();
    const retry = await postPayment(api.url, account.token, key, body);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    await expectOneSettledPayment(order.id, key, retry.text);
    const replay = await postPayment(api.url, account.token, key, body);
    expect([replay.status, replay.text, replay.headers.get("idempotent-replayed")]).toEqual([
      200,
      retry.text,
      "true",
    ]);
  });

  it("with no retry, the completer finishes it; a late retry sees the stored response", async () => {
    const { order, key, body } = await crashAt(point);
    await waitForLease();
    // Two completers at once (two worker processes): the fenced takeover lets only one drive it.
    // The limit reaches past what other tests on this database left unfinished.
    const deps = { prisma: db(), provider: provider.client };
    await Promise.all([
      completeAbandonedPayments(deps, { backoff: { idleSeconds: 0, maxSeconds: 1 }, limit: 500 }),
      completeAbandonedPayments(deps, { backoff: { idleSeconds: 0, maxSeconds: 1 }, limit: 500 }),
    ]);
    const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    expect([row.state, row.fence]).toEqual(["completed", 2]);
    const late = await postPayment(api.url, account.token, key, body);
    expect([late.status, late.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    await expectOneSettledPayment(order.id, key, late.text);
  });
});

it("a retry while the dead attempt's lease is still live is told to wait, not run twice", async () => {
  // A long lease, so that a slow machine cannot let it run out before the retry.
  const { key, body } = await crashAt("after_provider_charge", 60);
  const early = await postPayment(api.url, account.token, key, body);
  expect(early.status).toBe(409);
  expect(early.headers.get("retry-after")).toBe("1");
});

it("through HTTP, a provider fault asked for by header (charged, response dropped) still ends with one charge", async () => {
  const order = await createTestOrder(account);
  const key = newKey();
  const body = { orderId: order.id, paymentMethod: "pm_card_visa" };
  const dropped = await fetch(`${api.url}/api/trpc/payments.create`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${account.token}`,
      "idempotency-key": key,
      "x-provider-fault": "drop",
    },
    body: JSON.stringify(body),
  });
  expect(dropped.status).toBe(503);
  expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  const retry = await postPayment(api.url, account.token, key, body);
  expect(retry.status).toBe(200);
  await expectOneSettledPayment(order.id, key, retry.text);
});

it.each([
  ["a batch of one", "/api/trpc/payments.create?batch=1", {}],
  ["a batch behind a trailing slash", "/api/trpc/orders.get,payments.create/?batch=1", {}],
  ["a streamed (jsonl) answer", "/api/trpc/payments.create", { "trpc-accept": "application/jsonl" }],
])("refuses %s of an idempotent procedure with 400 and runs nothing", async (_label, path, extra) => {
  const order = await createTestOrder(account);
  const key = newKey();
  const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
  const batched = path.includes("batch=1");
  const res = await fetch(`${api.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${account.token}`,
      "idempotency-key": key,
      ...extra,
    },
    body: JSON.stringify(batched ? { 0: { orderId: order.id }, 1: input } : input),
  });
  expect(res.status).toBe(400);
  expect(await db().payment.count({ where: { orderId: order.id } })).toBe(0);
  expect(await db().idempotencyKey.count({ where: { accountId: account.id, key } })).toBe(0);
});
