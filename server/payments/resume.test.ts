import { describe, expect } from "vitest";
import { db } from "../db";
import { handleTrpcRequest } from "../http/trpc-handler";
import { httpProvider, type PaymentProvider } from "../provider";
import { adminCaller } from "../test/admin";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { closedPort, holdingProxy } from "../test/network";
import { createTestOrder, newKey, pay, payUntilSettled, providerChargesForOrder } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";
import { completeAbandonedPayments } from "./operation";

/** Resumed attempts, the completer's ends, and the edge cases of issue 10, in process. */
let provider: TestProvider;
let payer: TestAccount;
const since = new Date(Date.now() - 5000);

it.beforeAll(async ({ provider: running }) => {
  provider = running;
  payer = await createTestAccount("resume");
});

const keyRow = (key: string) => db().idempotencyKey.findFirstOrThrow({ where: { accountId: payer.id, key } });
const expireLease = (key: string) =>
  db().$executeRaw`UPDATE idempotency_keys SET locked_until = now() - interval '1 second'
                    WHERE account_id = ${payer.id}::uuid AND key = ${key}`;

/** A provider whose first charge call waits until released. */
function gatedProvider() {
  let open: () => void = () => {};
  const gate = new Promise<void>((r) => {
    open = r;
  });
  let first = true;
  const client: PaymentProvider = {
    createCharge: async (input, key, opts) => {
      if (first) {
        first = false;
        await gate;
      }
      return provider.client.createCharge(input, key, opts);
    },
    getCharge: (id) => provider.client.getCharge(id),
    listCharges: (opts) => provider.client.listCharges(opts),
    createRefund: (input, key, opts) => provider.client.createRefund(input, key, opts),
    listRefunds: (opts) => provider.client.listRefunds(opts),
    captureCharge: (...args) => provider.client.captureCharge(...args),
    cancelCharge: (...args) => provider.client.cancelCharge(...args),
    listEvents: (opts) => provider.client.listEvents(opts),
  };
  return { client, open };
}

async function paymentCreated(orderId: string) {
  for (let i = 0; i < 100; i++) {
    if (await db().payment.findFirst({ where: { orderId } })) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("phase 1 never committed");
}

describe("a resumed attempt", () => {
  it("fenced out after the winner committed, answers 409 with Retry-After, not 500", async () => {
    const order = await createTestOrder(payer);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const slow = gatedProvider();
    const first = pay(payer, key, input, slow.client);
    await paymentCreated(order.id);
    await expireLease(key);
    const winner = await pay(payer, key, input, provider.client);
    expect(winner.ok && winner.data.status).toBe("succeeded");
    slow.open();
    const loser = await first;
    expect(!loser.ok && loser.error.code).toBe("CONFLICT");
    expect(loser.headers.get("retry-after")).toBe("1");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });

  it("passes the provider's own in-flight answer on as 409 with Retry-After, and holds the key meanwhile", async () => {
    const order = await createTestOrder(payer);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_slow" };
    const first = pay(payer, key, input, provider.client);
    await paymentCreated(order.id);
    await new Promise((r) => setTimeout(r, 300)); // the slow charge is now in flight at the provider
    await expireLease(key);
    const second = await pay(payer, key, input, provider.client);
    expect(!second.ok && second.error.code).toBe("CONFLICT");
    expect(second.headers.get("retry-after")).toBe("1");
    const held = await keyRow(key);
    expect(held.lockedUntil?.getTime()).toBeGreaterThan(Date.now());
    const attempts = held.attempts;
    const third = await pay(payer, key, input, provider.client);
    expect(!third.ok && third.error.code).toBe("CONFLICT");
    expect((await keyRow(key)).attempts).toBe(attempts); // told to wait, not handed the key
    await first;
    const settled = await payUntilSettled(payer, key, input, provider.client);
    expect(settled.ok && settled.data.status).toBe("succeeded");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });
});

describe("the completer", () => {
  /** A payment whose charge request provably never left: the provider's port refused it. */
  async function strandedBeforeTheProvider() {
    const order = await createTestOrder(payer);
    const key = newKey();
    const down = httpProvider({ baseUrl: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 2000 });
    const outcome = await pay(payer, key, { orderId: order.id, paymentMethod: "pm_card_visa" }, down);
    expect(!outcome.ok && outcome.error.code).toBe("SERVICE_UNAVAILABLE");
    const payment = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
    expect(payment.chargeRequestedAt).toBeNull();
    await db()
      .$executeRaw`UPDATE idempotency_keys SET updated_at = now() - interval '1 minute', locked_until = NULL
                            WHERE account_id = ${payer.id}::uuid AND key = ${key}`;
    return { order, key };
  }
  const ageThePayment = (orderId: string) =>
    db()
      .$executeRaw`UPDATE payments SET created_at = now() - interval '2 hours' WHERE order_id = ${orderId}::uuid`;
  const run = () =>
    completeAbandonedPayments(
      { prisma: db(), provider: provider.client },
      { backoff: { idleSeconds: 5, maxSeconds: 5 }, abandonAfterSeconds: 3600 },
    );

  it("charges a payment that never reached the provider while the shopper's Pay is recent", async () => {
    const { order, key } = await strandedBeforeTheProvider();
    await run();
    expect((await keyRow(key)).responseStatus).toBe(200);
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });

  it("fails it, charging nothing, once the Pay press is older than the abandonment time", async () => {
    const { order, key } = await strandedBeforeTheProvider();
    await ageThePayment(order.id);
    await run();
    const row = await keyRow(key);
    expect([row.state, row.responseStatus]).toEqual(["completed", 402]);
    expect(String(row.responseBody ? JSON.stringify(row.responseBody) : "")).toMatch(/payment_abandoned/);
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(0);
    const payment = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
    expect([payment.status, payment.failureCode]).toEqual(["failed", "abandoned"]);
    // The order is free to pay again, under a new key.
    const again = await pay(
      payer,
      newKey(),
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(again.ok && again.data.status).toBe("succeeded");
  });

  it("never answers 'nothing charged' while a charge request may still land: it re-sends with the same key", async () => {
    const order = await createTestOrder(payer);
    const key = newKey();
    const network = await holdingProxy(provider.url);
    try {
      // The request is held in the network past the client's timeout: it may or may not arrive.
      const held = httpProvider({ baseUrl: network.url, timeoutMs: 300 });
      const outcome = await pay(payer, key, { orderId: order.id, paymentMethod: "pm_card_visa" }, held);
      expect(!outcome.ok && outcome.error.code).toBe("SERVICE_UNAVAILABLE");
      // The Pay press long ago, by the key's and by the payment's clock alike.
      await ageThePayment(order.id);
      await db()
        .$executeRaw`UPDATE idempotency_keys SET updated_at = now() - interval '1 minute', locked_until = NULL,
                                    created_at = now() - interval '2 hours'
                              WHERE account_id = ${payer.id}::uuid AND key = ${key}`;
      // Long past the abandonment time, and the provider lists no charge yet: still not abandoned.
      await run();
      // The held request lands now, with the same provider key: no second charge.
      await network.deliver();
    } finally {
      await network.close();
    }
    const row = await keyRow(key);
    expect(String(row.responseBody ? JSON.stringify(row.responseBody) : "")).not.toMatch(/payment_abandoned/);
    const payment = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
    expect(payment.status).toBe("succeeded");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });

  it("re-drive refuses a key whose attempt never began its work: nothing is created or charged", async () => {
    const order = await createTestOrder(payer);
    const key = newKey();
    const [{ id }] = (await db().$queryRaw<{ id: bigint }[]>`
      INSERT INTO idempotency_keys (account_id, key, procedure, fingerprint, request_params, lease_seconds, expires_at)
      VALUES (${payer.id}::uuid, ${key}, 'payments.create', 'fp', ${JSON.stringify({ orderId: order.id, paymentMethod: "pm_card_visa" })}::jsonb,
              30, now() + interval '1 day')
      RETURNING id`) as [{ id: bigint }];
    const admin = adminCaller(provider.client).admin;
    await expect(admin.keys.redrive({ id: String(id) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await db().payment.count({ where: { orderId: order.id } })).toBe(0);
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(0);
  });

  it("shows a key it keeps failing on as needs_attention, and the admin's re-drive settles it", async () => {
    const { order, key } = await strandedBeforeTheProvider();
    const { id } = await keyRow(key);
    await db()
      .$executeRaw`UPDATE idempotency_keys SET completer_attempts = 5, next_recovery_at = now() + interval '5 minutes'
                            WHERE id = ${id}`;
    const admin = adminCaller(provider.client).admin;
    expect((await admin.keys.get({ id: String(id) })).state).toBe("needs_attention");
    expect(
      (await admin.keys.list({ state: "needs_attention", accountId: payer.id })).items.map((k) => k.id),
    ).toContain(String(id));
    expect((await admin.keys.counts()).needs_attention).toBeGreaterThanOrEqual(1);
    const redriven = await admin.keys.redrive({ id: String(id) });
    expect(redriven.outcome).toBe("settled");
    expect(redriven.key.state).toBe("completed");
    expect(redriven.key.events.map((e) => e.kind)).toContain("redrive_requested");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
    await expect(admin.keys.redrive({ id: String(id) })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.keys.redrive({ id: "9223372036854775808" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });
});

describe("keys and inputs", () => {
  it("a key completed late keeps a full replay window from its completion", async () => {
    const order = await createTestOrder(payer);
    const key = newKey();
    const slow = gatedProvider();
    const first = pay(payer, key, { orderId: order.id, paymentMethod: "pm_card_visa" }, slow.client);
    await paymentCreated(order.id);
    // The claim's TTL runs out while the attempt is still working.
    await db().$executeRaw`UPDATE idempotency_keys SET created_at = now() - interval '25 hours',
                                  expires_at = now() - interval '1 hour'
                            WHERE account_id = ${payer.id}::uuid AND key = ${key}`;
    slow.open();
    expect((await first).ok).toBe(true);
    const row = await keyRow(key);
    const window = (row.expiresAt.getTime() - (row.completedAt?.getTime() ?? 0)) / 3_600_000;
    expect(window).toBeCloseTo(24, 1);
    const replay = await pay(
      payer,
      key,
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("an order id in upper case is the same request: a replay, not a 422", async () => {
    const order = await createTestOrder(payer);
    const key = newKey();
    const first = await pay(
      payer,
      key,
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(first.ok).toBe(true);
    const upper = await pay(
      payer,
      key,
      { orderId: order.id.toUpperCase(), paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(upper.ok && upper.headers.get("idempotent-replayed")).toBe("true");
  });

  it("a quoted key and the same text bare are two keys; several Idempotency-Key headers are 400", async () => {
    const order = await createTestOrder(payer);
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    const bare = newKey();
    expect((await pay(payer, bare, input, provider.client)).ok).toBe(true);
    const quoted = await pay(payer, `"${bare}"`, input, provider.client);
    expect(quoted.headers.get("idempotent-replayed")).toBeNull();
    expect(!quoted.ok && quoted.error.message).toMatch(/already paid/i);

    // The longest quoted key, every character escaped, is stored whole.
    const longest = `"${'\\"'.repeat(255)}"`;
    const other = await createTestOrder(payer);
    const long = await pay(payer, longest, { ...input, orderId: other.id }, provider.client);
    expect(long.ok).toBe(true);
    expect((await keyRow(longest)).key).toBe(longest);

    const headers = new Headers({
      authorization: `Bearer ${payer.token}`,
      "content-type": "application/json",
    });
    headers.append("idempotency-key", newKey());
    headers.append("idempotency-key", newKey());
    const res = await handleTrpcRequest(
      new Request("http://app.test/api/trpc/payments.create", {
        method: "POST",
        headers,
        body: JSON.stringify(input),
      }),
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/exactly one Idempotency-Key/);
  });
});
