import { afterAll, describe, expect } from "vitest";
import {
  NO_PGBOUNCER_REASON,
  type Pooler,
  pgbouncerForTests,
  startPgbouncer,
} from "../../scripts/lib/pgbouncer";
import { db } from "../db";
import { createTestAccount, directTestDatabaseUrl, type TestAccount } from "../test/fixtures";
import { createTestOrder, ledgerForOrder, newKey, providerChargesForOrder } from "../test/payments";
import { postPayment, startApiProcess } from "../test/processes";
import { it, type TestProvider } from "../test/vitest";

/**
 * The deployed shape: two stateless API instances, both through PgBouncer in transaction mode
 * (default settings) to one database. Every race between them is decided by the database.
 */
const binary = pgbouncerForTests();
const LEASE_SECONDS = 2;
type Api = Awaited<ReturnType<typeof startApiProcess>>;

let pooler: Pooler;
let provider: TestProvider;
let instances: Api[] = [];
let account: TestAccount;
const since = new Date(Date.now() - 5000);

const startInstance = () =>
  startApiProcess({
    DATABASE_URL: pooler.url,
    DIRECT_DATABASE_URL: directTestDatabaseUrl(),
    PAYMENT_PROVIDER_URL: provider.url,
    PAYMENT_LEASE_SECONDS: String(LEASE_SECONDS),
  });

/** One HTTP attempt; a connection cut by a dead instance is status 0. */
async function attempt(api: Api, key: string, body: { orderId: string; paymentMethod: string }) {
  try {
    return await postPayment(api.url, account.token, key, body);
  } catch {
    return { status: 0, headers: new Headers(), text: "" };
  }
}

/** Until settled, the same key, as a client would: on a cut connection or 5xx, on `fallback`. */
async function payWithRetries(first: Api, fallback: Api, body: { orderId: string; paymentMethod: string }) {
  const key = newKey();
  const statuses: number[] = [];
  for (let target = first; statuses.length < 60; ) {
    const res = await attempt(target, key, body);
    statuses.push(res.status);
    if (res.status !== 0 && res.status < 500 && !(res.status === 409 && res.headers.has("retry-after")))
      return { key, statuses, final: res };
    if (res.status === 0 || res.status >= 500) target = fallback;
    await new Promise((r) => setTimeout(r, res.status === 409 ? 500 : 100));
  }
  throw new Error(`payment for ${body.orderId} never settled: ${statuses.join(",")}`);
}

async function expectOnePaymentAndCharge(orderId: string) {
  expect(await db().payment.count({ where: { orderId } })).toBe(1);
  expect(await providerChargesForOrder(provider.client, orderId, since)).toHaveLength(1);
  expect(await ledgerForOrder(orderId)).toEqual([expect.objectContaining({ entries: 2, sum: 0 })]);
}

const title = "two instances behind PgBouncer (transaction mode), one database";
describe.skipIf(!binary)(binary ? title : `${title} (${NO_PGBOUNCER_REASON})`, () => {
  it.beforeAll(async ({ provider: running }) => {
    pooler = await startPgbouncer({ databaseUrl: directTestDatabaseUrl(), binary: binary as string });
    provider = running;
    account = await createTestAccount("instances");
    instances = await Promise.all([startInstance(), startInstance()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    await pooler?.stop();
  });

  it("a storm of 600 duplicates of one key, split across both, makes one payment and no 5xx", {
    timeout: 120_000,
  }, async () => {
    const order = await createTestOrder(account);
    const key = newKey();
    const body = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const answers = await Promise.all(
      Array.from({ length: 600 }, (_, n) =>
        postPayment((instances[n % 2] as Api).url, account.token, key, body),
      ),
    );
    // Each duplicate is either the payment (its replay) or told that it is still running.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 409).map((a) => a.status)).toEqual([]);
    const bodies = new Set(answers.filter((a) => a.status === 200).map((a) => a.text));
    expect(bodies.size).toBe(1);
    const replay = await postPayment((instances[1] as Api).url, account.token, key, body);
    expect([replay.status, replay.text, replay.headers.get("idempotent-replayed")]).toEqual([
      200,
      [...bodies][0],
      "true",
    ]);
    await expectOnePaymentAndCharge(order.id);
  });

  it("120 fresh payments across both all succeed", { timeout: 120_000 }, async () => {
    const orders = await Promise.all(Array.from({ length: 120 }, () => createTestOrder(account)));
    const answers = await Promise.all(
      orders.map((order, n) =>
        postPayment((instances[n % 2] as Api).url, account.token, newKey(), {
          orderId: order.id,
          paymentMethod: "pm_card_visa",
        }),
      ),
    );
    expect(answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.text}`)).toEqual([]);
    const paid = await db().payment.count({
      where: { orderId: { in: orders.map((o) => o.id) }, status: "succeeded" },
    });
    expect(paid).toBe(120);
  });

  it("one instance SIGKILLed during 60 payments: retries on the survivor settle every order once", {
    timeout: 120_000,
  }, async () => {
    const [survivor, doomed] = instances as [Api, Api];
    const orders = await Promise.all(Array.from({ length: 60 }, () => createTestOrder(account)));
    // One in three is slow at the provider, so the kill finds payments in the middle of a charge.
    const runs = orders.map((order, n) =>
      payWithRetries(n % 2 ? doomed : survivor, survivor, {
        orderId: order.id,
        paymentMethod: n % 3 === 0 ? "pm_card_slow" : "pm_card_visa",
      }),
    );
    await new Promise((r) => setTimeout(r, 700));
    process.kill(doomed.pid, "SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");
    const results = await Promise.all(runs);

    expect(results.map((r) => r.final.status)).toEqual(orders.map(() => 200));
    // The kill did cut requests in flight, which then finished on the survivor.
    expect(results.filter((r) => r.statuses.includes(0)).length).toBeGreaterThan(0);
    for (const order of orders) await expectOnePaymentAndCharge(order.id);
  });
});
