import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder } from "../test/payments";
import { postPayment, startApiProcess } from "../test/processes";

// The payment limit is counted in PostgreSQL, so two server processes share one allowance.
const LIMIT = 3;

let servers: Awaited<ReturnType<typeof startApiProcess>>[] = [];
let shopper: TestAccount;

beforeAll(async () => {
  shopper = await createTestAccount("limits");
  const env = {
    RATE_LIMIT_PAYMENTS_PER_MINUTE: String(LIMIT),
    RATE_LIMIT_ORDERS_PER_MINUTE: String(LIMIT),
    BACKGROUND_JOBS: "off",
  };
  servers = await Promise.all([startApiProcess(env), startApiProcess(env)]);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

// An order that does not exist: answered 404 by the payment itself, after the limit is spent.
const pay = (server: number, key: string, orderId = randomUUID()) =>
  postPayment(servers[server]?.url ?? "", shopper.token, key, { orderId, paymentMethod: "pm_card_visa" });

describe("the payment limit per account", () => {
  it("holds across two server processes, answers 429 with Retry-After, and replays cost nothing", async () => {
    const first = { key: randomUUID(), orderId: randomUUID() };
    expect((await pay(0, first.key, first.orderId)).status).toBe(404);
    expect((await pay(1, randomUUID())).status).toBe(404);
    expect((await pay(0, randomUUID())).status).toBe(404);

    // The allowance is spent, whichever process is asked.
    for (const server of [1, 0]) {
      const limited = await pay(server, randomUUID());
      expect(limited.status, limited.text).toBe(429);
      const retryAfter = Number(limited.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(JSON.parse(limited.text).error.data.code).toBe("TOO_MANY_REQUESTS");
    }

    // A retry of a stored answer is replayed, not limited.
    const replay = await pay(1, first.key, first.orderId);
    expect(replay.status).toBe(404);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("does not store a 429 under the key: the same key may be retried once allowed", async () => {
    const key = randomUUID();
    expect((await pay(0, key)).status).toBe(429);
    const row = await db().idempotencyKey.findUnique({
      where: { accountId_key: { accountId: shopper.id, key } },
      select: { state: true, responseStatus: true },
    });
    expect(row?.responseStatus ?? null).toBeNull();
    expect(row?.state ?? "in_progress").toBe("in_progress");
  });
});

describe("a payment refused by the limit", () => {
  it("leaves nothing that the completer or a retry could charge later", async () => {
    const buyer = await createTestAccount("limits-refused");
    const order = await createTestOrder(buyer);
    const payAs = (key: string, orderId: string) =>
      postPayment(servers[0]?.url ?? "", buyer.token, key, { orderId, paymentMethod: "pm_card_visa" });
    for (let i = 0; i < LIMIT; i++) expect((await payAs(randomUUID(), randomUUID())).status).toBe(404);

    const key = randomUUID();
    const refused = await payAs(key, order.id);
    expect(refused.status, refused.text).toBe(429);
    // Refused before its work began: no pending payment holds the order, and the key's claim is
    // taken back to "started", which neither the completer nor a re-drive acts on.
    expect(await db().payment.count({ where: { orderId: order.id } })).toBe(0);
    const row = await db().idempotencyKey.findUnique({
      where: { accountId_key: { accountId: buyer.id, key } },
      select: { state: true, recoveryPoint: true, lockedUntil: true },
    });
    expect(row).toMatchObject({ state: "in_progress", recoveryPoint: "started", lockedUntil: null });
  });
});

describe("a retry that resumes a payment already begun", () => {
  it("is not limited: the payment spent its point when it began, and the retry finishes it", async () => {
    const buyer = await createTestAccount("limits-resume");
    const order = await createTestOrder(buyer);
    const key = randomUUID();
    const send = (fault?: string) =>
      fetch(`${servers[0]?.url}/api/trpc/payments.create`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${buyer.token}`,
          "idempotency-key": key,
          ...(fault ? { "x-provider-fault": fault } : {}),
        },
        body: JSON.stringify({ orderId: order.id, paymentMethod: "pm_card_visa" }),
      });
    // Begun (its pending payment created, a charge request sent), then the provider failed.
    expect((await send("error=503")).status).toBe(503);
    // The rest of the account's minute is spent on other payments.
    for (let i = 1; i < LIMIT; i++) {
      const other = await postPayment(servers[1]?.url ?? "", buyer.token, randomUUID(), {
        orderId: randomUUID(),
        paymentMethod: "pm_card_visa",
      });
      expect(other.status).toBe(404);
    }
    await db().$executeRaw`UPDATE idempotency_keys SET locked_until = NULL
                            WHERE account_id = ${buyer.id}::uuid AND key = ${key}`;
    // The retry takes the key over and finishes the payment: a 429 here would say "refused"
    // about a payment the completer then charges.
    const retry = await send();
    expect(retry.status, await retry.clone().text()).toBe(200);
    expect(await db().payment.findFirstOrThrow({ where: { orderId: order.id } })).toMatchObject({
      status: "succeeded",
    });
  });
});

describe("the order limit per account", () => {
  it("answers 429 with Retry-After once spent, across both processes", async () => {
    const buyer = await createTestAccount("order-limits");
    const order = (server: number) =>
      fetch(`${servers[server]?.url}/api/trpc/orders.create`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${buyer.token}` },
        body: JSON.stringify({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] }),
      });
    for (const server of [0, 1, 0]) expect((await order(server)).status).toBe(200);
    const limited = await order(1);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await db().order.count({ where: { accountId: buyer.id } })).toBe(LIMIT);
  });
});

describe("the counters' table", () => {
  it("writes no WAL (decision 0042): a consume never waits for a flush while it holds a counter row", async () => {
    const [table] = await db().$queryRaw<{ relpersistence: string }[]>`
      SELECT relpersistence::text FROM pg_class WHERE oid = 'rate_limits'::regclass`;
    expect(table?.relpersistence).toBe("u");
  });
});
