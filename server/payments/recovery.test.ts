import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProvider } from "../../scripts/lib/provider-process";
import { db } from "../db";
import { httpProvider } from "../provider";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { createTestOrder, ledgerForOrder, newKey, providerChargesForOrder } from "../test/payments";
import { postPayment, startApiProcess, startWorkerProcess } from "../test/processes";

/**
 * Issue 10's reproduction, with real processes: phase 1 commits, the provider charges but its
 * answer is lost, then the provider is down while the client retries 20 times with the same key
 * and gives up. The provider comes back; with no client request at all, the completer (in the
 * worker process) books the payment once, with the one charge, within its capped backoff. Run
 * twice: with a provider that keeps its keys, and with one that forgets them after a second, so
 * only looking the charge up before charging again keeps it to one charge.
 */
const MAX_BACKOFF_SECONDS = 2;
const databaseUrl = process.env.DATABASE_URL as string;
let account: TestAccount;
let api: Awaited<ReturnType<typeof startApiProcess>>;
let worker: Awaited<ReturnType<typeof startWorkerProcess>>;
let port: number;
let provider: Awaited<ReturnType<typeof startProvider>> | null = null;
let release: (() => Promise<void>) | undefined;
const since = new Date(Date.now() - 5000);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  if (!address || typeof address !== "object") throw new Error("no port");
  return address.port;
}

const startOurProvider = (retentionSeconds: number) =>
  startProvider({
    databaseUrl,
    port,
    env: { PROVIDER_KEY_RETENTION_SECONDS: String(retentionSeconds) },
  });

beforeAll(async () => {
  // The worker runs a relay and a receipts consumer too: it takes its turn with the other
  // messaging tests, so that it never takes their deliveries.
  release = await takeMessagingTurn();
  port = await freePort();
  account = await createTestAccount("recovery");
  const env = {
    PAYMENT_PROVIDER_URL: `http://127.0.0.1:${port}`,
    PAYMENT_LEASE_SECONDS: "1",
    COMPLETER_MAX_BACKOFF_SECONDS: String(MAX_BACKOFF_SECONDS),
  };
  api = await startApiProcess(env);
  worker = await startWorkerProcess(env);
}, 180_000);
afterAll(async () => {
  await api?.stop();
  await worker?.stop();
  await provider?.stop();
  await release?.();
}, 120_000);

async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.each([
  ["keeps its keys", 86_400],
  ["forgets its keys after a second", 1],
])("a charge whose answer was lost, then an outage: the provider %s", (_label, retentionSeconds) => {
  it("is booked once, with its one charge, by the completer alone", async () => {
    provider = await startOurProvider(retentionSeconds);
    const order = await createTestOrder(account);
    const key = newKey();
    const body = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const pay = (fault?: string) =>
      fetch(`${api.url}/api/trpc/payments.create`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${account.token}`,
          "idempotency-key": key,
          ...(fault ? { "x-provider-fault": fault } : {}),
        },
        body: JSON.stringify(body),
      });

    // The provider charges, and the answer never arrives.
    expect((await pay("drop")).status).toBe(503);
    expect(
      await providerChargesForOrder(httpProvider({ baseUrl: provider.url }), order.id, since),
    ).toHaveLength(1);
    await provider.stop();
    provider = null;

    // The provider is down; the client retries 20 times with the same key, then gives up.
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await pay();
      statuses.push(res.status);
      await res.text();
      if (res.status === 409) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(statuses.every((s) => s === 503 || s === 409)).toBe(true);
    const stuck = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    expect(stuck.state).toBe("in_progress");
    expect(stuck.attempts).toBeGreaterThan(15);

    // While the provider is down the reconciler still reports, and says so.
    const reconcile = await fetch(`${api.url}/api/trpc/admin.reconcile.run`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer admin_test" },
      body: "{}",
    });
    expect(reconcile.status).toBe(200);
    const report = (await reconcile.json()) as { result: { data: { providerError: string | null } } };
    expect(report.result.data.providerError).toMatch(/unreachable/);

    // The provider recovers, the keys it forgot included; no client comes back.
    await new Promise((r) => setTimeout(r, retentionSeconds === 1 ? 1100 : 0));
    provider = await startOurProvider(retentionSeconds);
    const settled = await waitFor(
      "the completer to book the payment",
      async () => {
        const row = await db().payment.findFirst({
          where: { orderId: order.id, status: { not: "pending" } },
        });
        return row;
      },
      // Its capped backoff, idle time and the worker's 2 s tick, with room for a loaded machine.
      (MAX_BACKOFF_SECONDS + 5 + 2) * 1000 * 6,
    );
    expect(settled.status).toBe("succeeded");
    const charges = await providerChargesForOrder(httpProvider({ baseUrl: provider.url }), order.id, since);
    expect(charges.map((c) => c.id)).toEqual([settled.providerChargeId]);
    const ledger = await ledgerForOrder(order.id);
    expect(ledger.map((t) => [t.entries, t.sum])).toEqual([[2, 0]]);
    const done = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
    expect([done.state, done.responseStatus]).toEqual(["completed", 200]);
    expect(done.completerAttempts).toBeGreaterThan(0);

    // The client, back at last, sees the stored answer.
    const late = await postPayment(api.url, account.token, key, body);
    expect([late.status, late.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    await provider.stop();
    provider = null;
  }, 180_000);
});
