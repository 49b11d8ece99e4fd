import { randomUUID } from "node:crypto";
import pg from "pg";
import { payRest, payTrpc } from "./api";
import { expect, apiTest as test } from "./fixtures";

/**
 * The payment's failure answers on the production build (`next build` + `next start`), with the
 * background jobs on: the provider client is then built by the instrumentation layer's copy of
 * the modules, and every check of an error's kind in the route handlers' copy must still hold
 * (docs/decisions/0095). Money is counted at the provider and in the database, not through the
 * app under test.
 */

test("a declined card is 402, stored, and replayed on both surfaces; nothing is booked", async ({
  request,
  shop,
}) => {
  const order = await shop.newOrder();
  const key = randomUUID();
  const first = await payTrpc(request, order.id, key, "pm_card_declined");
  expect(first.status(), await first.text()).toBe(402);
  const body = await first.json();
  expect(body.error.data.details).toMatchObject({ reason: "card_declined", declineCode: "generic_decline" });

  const again = await payTrpc(request, order.id, key, "pm_card_declined");
  expect([again.status(), again.headers()["idempotent-replayed"]]).toEqual([402, "true"]);
  expect(await again.json()).toEqual(body);
  const rest = await payRest(request, order.id, key, "pm_card_declined");
  expect([rest.status(), rest.headers()["idempotent-replayed"]]).toEqual([402, "true"]);
  expect(await rest.json()).toMatchObject({ type: "/docs/problems#card-declined", reason: "card_declined" });

  const trail = await shop.trail(order.id);
  expect(trail.payments.map((p) => p.status)).toEqual(["declined"]);
  expect(trail.charges.map((c) => c.status)).toEqual(["declined"]);
  expect(trail.ledgerTransactions).toBe(0);
});

test("a payment method the provider refuses for good (its 400) is 402 provider_refused, stored and replayed", async ({
  request,
  shop,
}) => {
  const order = await shop.newOrder();
  const key = randomUUID();
  const first = await payRest(request, order.id, key, "pm_card_unknown");
  expect(first.status(), await first.text()).toBe(402);
  const problem = await first.json();
  expect(problem).toMatchObject({ type: "/docs/problems#payment-refused", reason: "provider_refused" });

  const again = await payRest(request, order.id, key, "pm_card_unknown");
  expect([again.status(), again.headers()["idempotent-replayed"]]).toEqual([402, "true"]);
  expect(await again.json()).toEqual(problem);

  const trail = await shop.trail(order.id);
  expect(trail.payments.map((p) => p.status)).toEqual(["failed"]);
  expect([trail.charges.length, trail.ledgerTransactions]).toEqual([0, 0]);
});

test("a provider 5xx is 503 with Retry-After, not stored; the retry with the same key charges once", async ({
  request,
  shop,
}) => {
  const order = await shop.newOrder();
  const key = randomUUID();
  for (const pay of [payTrpc, payRest]) {
    const failed = await pay(request, order.id, key, "pm_card_visa", { "x-provider-fault": "error=500" });
    expect(failed.status(), await failed.text()).toBe(503);
    expect(Number(failed.headers()["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(failed.headers()["idempotent-replayed"]).toBeUndefined();
    // As a client would: it waits the Retry-After it was told.
    await new Promise((r) => setTimeout(r, Number(failed.headers()["retry-after"]) * 1000 + 200));
  }
  const rest = await payRest(request, order.id, key, "pm_card_visa");
  expect(rest.headers()["content-type"]).not.toContain("problem");
  expect(rest.status(), await rest.text()).toBe(200);
  expect((await rest.json()).status).toBe("succeeded");

  const trail = await shop.trail(order.id);
  expect(trail.payments.map((p) => p.status)).toEqual(["succeeded"]);
  expect([trail.charges.length, trail.ledgerTransactions]).toEqual([1, 1]);
});

test("an attempt whose lease is taken over is fenced (409 + Retry-After), and the order is charged once", async ({
  request,
  shop,
}) => {
  const pool = new pg.Pool({ connectionString: process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL });
  try {
    const order = await shop.newOrder();
    const key = randomUUID();
    // pm_card_slow keeps the first attempt at the provider for about 2 s.
    const first = payTrpc(request, order.id, key, "pm_card_slow");
    await expect
      .poll(async () => {
        const found = await pool.query(
          `SELECT 1 FROM idempotency_keys k JOIN payments p ON p.idempotency_key_id = k.id
            WHERE k.key = $1 AND k.state = 'in_progress'`,
          [key],
        );
        return found.rowCount;
      })
      .toBe(1);
    // Its process stalls as far as the database can tell: the lease runs out, a retry takes over.
    await pool.query(
      "UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = $1",
      [key],
    );
    const takeover = await payTrpc(request, order.id, key, "pm_card_slow");
    // Still at the provider under the same provider key: "in flight there", told when to come back.
    expect(takeover.status(), await takeover.text()).toBe(409);
    expect((await takeover.json()).error.data.details).toEqual({ reason: "in_flight_at_provider" });
    expect(Number(takeover.headers()["retry-after"])).toBeGreaterThanOrEqual(1);

    // The first attempt's charge comes back, but its fence is stale: it may not book.
    const fenced = await first;
    expect(fenced.status(), await fenced.text()).toBe(409);
    expect((await fenced.json()).error.message).toContain("lost its lease");
    expect(Number(fenced.headers()["retry-after"])).toBeGreaterThanOrEqual(1);

    await expect
      .poll(async () => (await payTrpc(request, order.id, key, "pm_card_slow")).status(), { timeout: 20_000 })
      .toBe(200);
    const events = await pool.query<{ kind: string }>(
      `SELECT e.kind FROM idempotency_key_events e JOIN idempotency_keys k ON k.id = e.key_id WHERE k.key = $1`,
      [key],
    );
    expect(events.rows.map((e) => e.kind)).toContain("fenced");
    const trail = await shop.trail(order.id);
    expect(trail.payments.map((p) => p.status)).toEqual(["succeeded"]);
    expect([trail.charges.length, trail.ledgerTransactions]).toEqual([1, 1]);
  } finally {
    await pool.end();
  }
});
