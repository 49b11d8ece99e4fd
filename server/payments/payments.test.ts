import { describe, expect } from "vitest";
import { db } from "../db";
import { type Charge, type PaymentProvider, ProviderError } from "../provider";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import {
  createTestOrder,
  ledgerForOrder,
  newKey,
  pay,
  payUntilSettled,
  providerChargesForOrder,
} from "../test/payments";
import { it, type TestProvider } from "../test/vitest";
import { payment } from "./operation";

let provider: TestProvider;
let alice: TestAccount;
const since = new Date(Date.now() - 5000);

it.beforeAll(async ({ provider: running }) => {
  provider = running;
  alice = await createTestAccount("payer");
});

/** Passes a provider fault on the first charge attempt only, as a flaky network would. */
function faultOnce(fault: string): PaymentProvider {
  let used = false;
  return {
    createCharge: (input, key) => {
      const opts = used ? {} : { fault };
      used = true;
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
}

describe("orders", () => {
  it("prices the order from the catalogue, for the authenticated account only", async () => {
    const order = await createTestOrder(alice, [
      { sku: "TEE-CLASSIC", quantity: 2 },
      { sku: "MUG-ENAMEL", quantity: 1 },
      { sku: "TEE-CLASSIC", quantity: 1 },
    ]);
    expect(order).toMatchObject({ total: 3 * 2500 + 1800, currency: "EUR", status: "pending_payment" });
    const bob = await createTestAccount("other");
    await expect(createCaller(contextFor(bob)).orders.get({ orderId: order.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      createCaller(contextFor(alice)).orders.create({ items: [{ sku: "NOPE", quantity: 1 }] }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });
});

describe("payments.create", () => {
  it("charges once, books one balanced ledger transaction, marks the order paid and replays", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const first = await pay(
      alice,
      key,
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(first.ok && first.data).toMatchObject({
      orderId: order.id,
      amount: 5000,
      currency: "EUR",
      status: "succeeded",
    });
    const again = await pay(
      alice,
      key,
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.stringify(again.ok && again.data)).toBe(JSON.stringify(first.ok && first.data));

    const charges = await providerChargesForOrder(provider.client, order.id, since);
    expect(charges.map((c) => c.id)).toEqual([first.ok && first.data.providerChargeId]);
    expect(await ledgerForOrder(order.id)).toEqual([expect.objectContaining({ entries: 2, sum: 0 })]);
    const view = await createCaller(contextFor(alice)).orders.get({ orderId: order.id });
    expect(view.status).toBe("paid");
    expect(view.payment?.id).toBe(first.ok && first.data.id);
  });

  it("stores a declined card as a 402 outcome and replays it; a new key with another card then succeeds", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const declined = await pay(
      alice,
      key,
      { orderId: order.id, paymentMethod: "pm_card_declined" },
      provider.client,
    );
    expect(!declined.ok && declined.error.code).toBe("PAYMENT_REQUIRED");
    expect(!declined.ok && declined.error.message).toMatch(/declined/i);
    const replay = await pay(
      alice,
      key,
      { orderId: order.id, paymentMethod: "pm_card_declined" },
      provider.client,
    );
    expect(!replay.ok && replay.error.code).toBe("PAYMENT_REQUIRED");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    // Stamped by the database's clock, in the transaction that completed the key.
    const [stamps] = await db().$queryRaw<{ same: boolean }[]>`
      SELECT p.updated_at = k.completed_at AS same
        FROM payments p JOIN idempotency_keys k ON k.id = p.idempotency_key_id
       WHERE p.order_id = ${order.id}::uuid`;
    expect(stamps?.same).toBe(true);

    const ok = await pay(
      alice,
      newKey(),
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      provider.client,
    );
    expect(ok.ok && ok.data.status).toBe("succeeded");
    const charges = await providerChargesForOrder(provider.client, order.id, since);
    expect(charges.map((c) => c.status).sort()).toEqual(["declined", "succeeded"]);
    expect(await ledgerForOrder(order.id)).toHaveLength(1);
  });

  it("two keys for one order at the same moment: one payment, the other answer is 'already paid'", async () => {
    for (let round = 0; round < 5; round++) {
      const order = await createTestOrder(alice);
      const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
      const [a, b] = await Promise.all([
        pay(alice, newKey(), input, provider.client),
        pay(alice, newKey(), input, provider.client),
      ]);
      const winners = [a, b].filter((o) => o.ok);
      const loser = [a, b].find((o) => !o.ok);
      expect(winners).toHaveLength(1);
      expect(loser && !loser.ok && loser.error.code).toBe("CONFLICT");
      expect(loser && !loser.ok && loser.error.message).toMatch(/already paid/i);
      // While the winner was still pending the answer may change, so it says when to ask again.
      const pending = loser && !loser.ok && loser.error.message.includes("is pending");
      expect(loser?.headers.get("retry-after")).toBe(pending ? "1" : null);
      expect(await db().payment.count({ where: { orderId: order.id } })).toBe(1);
      expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
    }
  });

  it("'already paid' against a pending payment is not stored; against a succeeded one it is", async () => {
    const order = await createTestOrder(alice);
    const input = { orderId: order.id, paymentMethod: "pm_card_slow" };
    const slow = pay(alice, newKey(), input, provider.client);
    await new Promise((r) => setTimeout(r, 400));
    const otherKey = newKey();
    const early = await pay(alice, otherKey, input, provider.client);
    expect(!early.ok && early.error.code).toBe("CONFLICT");
    expect(early.headers.get("retry-after")).toBe("1");
    // Not stored: the key is only held for the Retry-After the client was told, then free again.
    const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: alice.id, key: otherKey } });
    expect([row.state, row.responseStatus]).toEqual(["in_progress", null]);
    expect(row.lockedUntil?.getTime()).toBeLessThanOrEqual(Date.now() + 1500);
    expect((await slow).ok).toBe(true);
    const late = await payUntilSettled(alice, otherKey, input, provider.client);
    expect(!late.ok && late.error.message).toMatch(/already paid: payment .* is succeeded/i);
    expect(late.headers.get("retry-after")).toBeNull();
    const replay = await pay(alice, otherKey, input, provider.client);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });

  it("a provider 4xx that proves nothing (a gateway's 403) after a failed charge does not free the order", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_visa" };
    let call = 0;
    const gateway: PaymentProvider = {
      createCharge: (charge, k) => {
        call++;
        if (call === 1) return provider.client.createCharge(charge, k, { fault: "error=503" });
        if (call === 2)
          return Promise.reject(
            new ProviderError("HTTP 403 from a gateway", { kind: "rejected", status: 403 }),
          );
        return provider.client.createCharge(charge, k);
      },
      getCharge: (id) => provider.client.getCharge(id),
      listCharges: (opts) => provider.client.listCharges(opts),
      createRefund: (input, key, opts) => provider.client.createRefund(input, key, opts),
      listRefunds: (opts) => provider.client.listRefunds(opts),
      captureCharge: (...args) => provider.client.captureCharge(...args),
      cancelCharge: (...args) => provider.client.cancelCharge(...args),
      listEvents: (opts) => provider.client.listEvents(opts),
    };
    expect((await pay(alice, key, input, gateway)).ok).toBe(false);
    const forbidden = await pay(alice, key, input, gateway);
    expect(!forbidden.ok && forbidden.error.code).toBe("SERVICE_UNAVAILABLE");
    expect((await db().payment.findFirstOrThrow({ where: { orderId: order.id } })).status).toBe("pending");
    const otherTab = await pay(alice, newKey(), input, gateway);
    expect(!otherTab.ok && otherTab.error.message).toMatch(/already paid/i);
    const retry = await payUntilSettled(alice, key, input, gateway);
    expect(retry.ok && retry.data.status).toBe("succeeded");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });

  it("a provider 5xx leaves the key retryable and the retry charges once", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const flaky = faultOnce("error=500");
    const first = await pay(alice, key, { orderId: order.id, paymentMethod: "pm_card_visa" }, flaky);
    expect(!first.ok && first.error.code).toBe("SERVICE_UNAVAILABLE");
    const retry = await payUntilSettled(
      alice,
      key,
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      flaky,
    );
    expect(retry.ok && retry.data.status).toBe("succeeded");
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
    expect(await ledgerForOrder(order.id)).toHaveLength(1);
  });

  it("a charge whose response was dropped is not charged again: the retry gets the same charge", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const dropping = faultOnce("drop");
    const first = await pay(alice, key, { orderId: order.id, paymentMethod: "pm_card_visa" }, dropping);
    expect(!first.ok && first.error.code).toBe("SERVICE_UNAVAILABLE");
    const charged: Charge[] = await providerChargesForOrder(provider.client, order.id, since);
    expect(charged).toHaveLength(1);
    const retry = await payUntilSettled(
      alice,
      key,
      { orderId: order.id, paymentMethod: "pm_card_visa" },
      dropping,
    );
    expect(retry.ok && retry.data.providerChargeId).toBe(charged[0]?.id);
    expect(await providerChargesForOrder(provider.client, order.id, since)).toHaveLength(1);
  });

  it("refuses a payment method that is not an id, with 400 and nothing stored", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const bad = await pay(
      alice,
      key,
      { orderId: order.id, paymentMethod: "visa; drop table" },
      provider.client,
    );
    expect(!bad.ok && bad.error.code).toBe("BAD_REQUEST");
    expect(await db().idempotencyKey.count({ where: { accountId: alice.id, key } })).toBe(0);
  });
});

describe("row ids", () => {
  it("are ordered by creation time, so new rows append to their indexes (decision 0046)", async () => {
    const made: Record<"order" | "payment" | "ledgerTransaction" | "charge", string[]> = {
      order: [],
      payment: [],
      ledgerTransaction: [],
      charge: [],
    };
    for (let i = 0; i < 4; i++) {
      const order = await createTestOrder(alice, [{ sku: "MUG-ENAMEL", quantity: 1 }]);
      const paid = await pay(
        alice,
        newKey(),
        { orderId: order.id, paymentMethod: "pm_card_visa" },
        provider.client,
      );
      if (!paid.ok) throw paid.error;
      const [ledger] = await ledgerForOrder(order.id);
      made.order.push(order.id);
      made.payment.push(paid.data.id);
      made.ledgerTransaction.push(ledger?.transaction_id as string);
      made.charge.push(paid.data.providerChargeId as string);
    }
    for (const ids of Object.values(made)) expect(ids).toEqual([...ids].sort());
    // Version 7 (the time-ordered layout), not version 4's random bits.
    for (const id of [...made.order, ...made.payment, ...made.ledgerTransaction]) expect(id[14]).toBe("7");
  });
});

describe("a payment the provider has not finished (3-D Secure asked for)", () => {
  it("is in flight (409 with Retry-After), never booked nor refused; the completer leaves it pending", async () => {
    const order = await createTestOrder(alice);
    const key = newKey();
    const input = { orderId: order.id, paymentMethod: "pm_card_authenticationRequired" };
    const first = await pay(alice, key, input, provider.client);
    expect(first.ok).toBe(false);
    if (first.ok) return;
    expect(first.error.code).toBe("CONFLICT");
    expect(first.headers.get("retry-after")).not.toBeNull();
    const row = await db().payment.findFirstOrThrow({ where: { orderId: order.id } });
    expect(row.status).toBe("pending");
    // Held for the Retry-After the client was told ("busy"), or tried and still unfinished ("failed").
    expect(["busy", "failed"]).toContain(
      await payment.redrive({ prisma: db(), provider: provider.client }, row.idempotencyKeyId as bigint, {
        by: "test",
      }),
    );
    expect((await db().payment.findUniqueOrThrow({ where: { id: row.id } })).status).toBe("pending");
    expect(await db().ledgerTransaction.count({ where: { paymentId: row.id } })).toBe(0);
  });
});
