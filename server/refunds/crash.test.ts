import { afterAll, describe, expect } from "vitest";
import { db } from "../db";
import { httpProvider } from "../provider";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { newKey } from "../test/payments";
import { startApiProcess } from "../test/processes";
import { paidPayment, postRefund, providerRefunds, refund, refundBooks } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { refund as refundOperation } from "./operation";

const completeAbandonedRefunds = refundOperation.complete;

import { OPERATORS_ACCOUNT } from "./operators";

/**
 * A server process killed with SIGKILL right after each of a refund's recovery points: after
 * phase 1 (the pending refund, its request marked), and after the provider refunded but before
 * phase 3. Whether the operator retries with the same key or never comes back (the completer),
 * the payment ends with one provider refund, one balanced reversal and a completed key whose
 * stored response is what a retry sees.
 */
const LEASE_SECONDS = 2;
const CRASH_POINTS = ["after_refund_created", "after_provider_refund"] as const;
const reason = "crash test";

let provider: TestProvider;
let api: Awaited<ReturnType<typeof startApiProcess>>;
let account: TestAccount;

it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("refund-crash");
  api = await startApiProcess({
    PAYMENT_PROVIDER_URL: provider.url,
    PAYMENT_LEASE_SECONDS: String(LEASE_SECONDS),
  });
});
afterAll(async () => {
  await api?.stop();
});

const chargeOf = async (paymentId: string) =>
  (await db().payment.findUniqueOrThrow({ where: { id: paymentId } })).providerChargeId as string;
const keyRow = (key: string) =>
  db().idempotencyKey.findUniqueOrThrow({
    where: { accountId_key: { accountId: OPERATORS_ACCOUNT.id, key } },
  });

async function crashAt(point: string, leaseSeconds = LEASE_SECONDS) {
  const paid = await paidPayment(account, provider.client);
  const key = newKey();
  const body = { paymentId: paid.paymentId, amountMinor: 1500, reason };
  const doomed = await startApiProcess({
    PAYMENT_PROVIDER_URL: provider.url,
    PAYMENT_LEASE_SECONDS: String(leaseSeconds),
    CHECKOUT_FAILPOINTS: point,
  });
  await expect(postRefund(doomed.url, key, body)).rejects.toThrow();
  expect(await doomed.exited).toBe("SIGKILL");
  const row = await keyRow(key);
  expect([row.state, row.recoveryPoint]).toEqual(["in_progress", "refund_created"]);
  // The crash really came before (phase 1) or after (phase 2) the provider's refund.
  const atProvider = await providerRefunds(provider.client, await chargeOf(paid.paymentId));
  expect(atProvider.count).toBe(point === "after_provider_refund" ? 1 : 0);
  expect(await refundBooks(paid.paymentId)).toMatchObject({ pending: 1, reversals: 0 });
  return { paid, key, body };
}

async function expectOneBookedRefund(paymentId: string, key: string, seen: string) {
  expect(await providerRefunds(provider.client, await chargeOf(paymentId))).toMatchObject({
    count: 1,
    sum: 1500,
  });
  expect(await refundBooks(paymentId)).toMatchObject({
    succeeded: 1,
    pending: 0,
    reversals: 1,
    reversal_sum: 1500,
    unbalanced: 0,
  });
  const row = await keyRow(key);
  expect(row.state).toBe("completed");
  expect(JSON.parse(seen)).toEqual((row.responseBody as { data: unknown }).data);
}

const waitForLease = () => new Promise((r) => setTimeout(r, LEASE_SECONDS * 1000 + 300));

describe.each(CRASH_POINTS)("SIGKILL %s", (point) => {
  it("the operator's retry with the same key finishes it: one provider refund, one reversal", async () => {
    const { paid, key, body } = await crashAt(point);
    await waitForLease();
    const retry = await postRefund(api.url, key, body);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
    await expectOneBookedRefund(paid.paymentId, key, retry.text);
    const replay = await postRefund(api.url, key, body);
    expect([replay.status, replay.text, replay.headers.get("idempotent-replayed")]).toEqual([
      200,
      retry.text,
      "true",
    ]);
  });

  it("with no retry, the completer finishes it; a late retry sees the stored response", async () => {
    const { paid, key, body } = await crashAt(point);
    await waitForLease();
    const deps = { prisma: db(), provider: provider.client };
    // Two completers at once: the fenced takeover lets only one drive it.
    await Promise.all([
      completeAbandonedRefunds(deps, { backoff: { idleSeconds: 0, maxSeconds: 1 }, limit: 500 }),
      completeAbandonedRefunds(deps, { backoff: { idleSeconds: 0, maxSeconds: 1 }, limit: 500 }),
    ]);
    const row = await keyRow(key);
    expect([row.state, row.fence]).toEqual(["completed", 2]);
    const late = await postRefund(api.url, key, body);
    expect([late.status, late.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    await expectOneBookedRefund(paid.paymentId, key, late.text);
  });
});

it("a retry while the dead attempt's lease is still live is told to wait (409), not run twice", async () => {
  // A long lease, so that a slow machine cannot let it run out before the retry.
  const { key, body } = await crashAt("after_provider_refund", 60);
  const early = await postRefund(api.url, key, body);
  expect(early.status).toBe(409);
  expect(early.headers.get("retry-after")).toBe("1");
  expect(early.headers.get("content-type")).toBe("application/problem+json");
});

it("a provider that times out (the refund made, its answer late): 503, then the completer books it once", async () => {
  const paid = await paidPayment(account, provider.client);
  const impatient = httpProvider({ baseUrl: provider.url, timeoutMs: 300 });
  const key = newKey();
  const timedOut = await refund(key, { paymentId: paid.paymentId, amountMinor: 1500, reason }, impatient, {
    "x-provider-fault": "latency=1500",
  });
  expect(timedOut).toMatchObject({ ok: false, error: { code: "SERVICE_UNAVAILABLE" } });
  // The request left: never "nothing refunded"; the refund stays pending with its request marked.
  const pending = await db().refund.findFirstOrThrow({ where: { paymentId: paid.paymentId } });
  expect(pending.status).toBe("pending");
  expect(pending.refundRequestedAt).not.toBeNull();
  await new Promise((r) => setTimeout(r, 1500));
  await completeAbandonedRefunds(
    { prisma: db(), provider: provider.client },
    { backoff: { idleSeconds: 0, maxSeconds: 1 }, limit: 500 },
  );
  expect((await keyRow(key)).state).toBe("completed");
  expect(await providerRefunds(provider.client, await chargeOf(paid.paymentId))).toMatchObject({
    count: 1,
    sum: 1500,
  });
  expect(await refundBooks(paid.paymentId)).toMatchObject({ succeeded: 1, reversals: 1, reversal_sum: 1500 });
});

it("through HTTP, a provider fault asked for by header (refunded, answer dropped) still ends with one refund", async () => {
  const paid = await paidPayment(account, provider.client);
  const key = newKey();
  const body = { paymentId: paid.paymentId, amountMinor: 1500, reason };
  const dropped = await postRefund(api.url, key, body, { "x-provider-fault": "drop" });
  expect(dropped.status).toBe(503);
  expect(dropped.headers.get("content-type")).toBe("application/problem+json");
  expect(await providerRefunds(provider.client, await chargeOf(paid.paymentId))).toMatchObject({ count: 1 });
  const retry = await postRefund(api.url, key, body);
  expect(retry.status).toBe(200);
  await expectOneBookedRefund(paid.paymentId, key, retry.text);
});
