import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { env } from "../env";
import { createTestAccount, createTestSession, type TestAccount } from "../test/fixtures";
import { providerChargesForOrder } from "../test/payments";
import {
  type Answer,
  call,
  json,
  newKey,
  type RestStack,
  restOrder,
  restPay,
  startRestStack,
} from "../test/rest-stack";

let stack: RestStack;
let base: string;
let alice: TestAccount;
let bob: TestAccount;
const since = new Date(Date.now() - 5000);

beforeAll(async () => {
  stack = await startRestStack();
  base = stack.url;
  [alice, bob] = await Promise.all([createTestAccount("rest"), createTestAccount("rest")]);
});
afterAll(() => stack?.stop());

const visa = (orderId: string) => ({ orderId, paymentMethod: "pm_card_visa" });
const problemType = (a: Answer) => {
  expect(a.headers.get("content-type")).toBe("application/problem+json");
  return json(a).type;
};

function trpcPay(token: string, key: string, input: { orderId: string; paymentMethod: string }) {
  return call(base, "POST", "/api/trpc/payments.create", { token, key, body: input });
}

/** Money moved for an order: payment rows and charges at the provider. */
async function moneyFor(orderId: string) {
  return {
    payments: await db().payment.count({ where: { orderId } }),
    charges: (await providerChargesForOrder(stack.provider.client, orderId, since)).length,
  };
}

describe("resources", () => {
  it("GET /api/v1/products is public and lists the catalogue in minor units; the answer carries its request id", async () => {
    const res = await call(base, "GET", "/api/v1/products", { headers: { "x-request-id": "rest-test-1" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("rest-test-1");
    expect(json(res)).toContainEqual({
      sku: "TEE-CLASSIC",
      name: expect.any(String),
      price: 2500,
      currency: "EUR",
    });
  });

  it("orders and payments are the account's own: created, read back, 404 for another account", async () => {
    const order = await restOrder(base, alice.token, 2);
    expect(order.total).toBe(5000);
    const paid = await restPay(base, alice.token, newKey(), visa(order.id));
    const payment = json(paid);
    const got = await call(base, "GET", `/api/v1/payments/${payment.id}`, { token: alice.token });
    expect(got.text).toBe(paid.text);
    const orderView = json(await call(base, "GET", `/api/v1/orders/${order.id}`, { token: alice.token }));
    expect(orderView).toMatchObject({
      id: order.id,
      status: "paid",
      payment: { id: payment.id, status: "succeeded" },
    });

    for (const path of [`/api/v1/orders/${order.id}`, `/api/v1/payments/${payment.id}`]) {
      const other = await call(base, "GET", path, { token: bob.token });
      expect(other.status).toBe(404);
      expect(problemType(other)).toBe("/docs/problems#not-found");
    }
  });

  it("bad input is a 400 problem naming the field; a wrong content type 415; an oversized body 413", async () => {
    const bad = await call(base, "GET", "/api/v1/orders/not-a-uuid", { token: alice.token });
    expect(bad.status).toBe(400);
    expect(problemType(bad)).toBe("/docs/problems#invalid-request");
    expect(json(bad).errors).toEqual([{ path: "id", message: expect.any(String) }]);

    const text = await call(base, "POST", "/api/v1/orders", {
      token: alice.token,
      body: "items=1",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect(problemType(text)).toBe("/docs/problems#unsupported-media-type");

    const order = await restOrder(base, alice.token);
    const huge = { ...visa(order.id), padding: "x".repeat(env.IDEMPOTENCY_MAX_BODY_BYTES) };
    const tooLarge = await restPay(base, alice.token, newKey(), huge);
    expect(tooLarge.status).toBe(413);
    expect(problemType(tooLarge)).toBe("/docs/problems#payload-too-large");
    expect(await moneyFor(order.id)).toEqual({ payments: 0, charges: 0 });
  });

  it("authenticates Bearer API keys only: no key or a bad key is 401, and a session cookie does not count", async () => {
    const noKey = await call(base, "POST", "/api/v1/orders", {
      body: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
    });
    expect(noKey.status).toBe(401);
    expect(problemType(noKey)).toBe("/docs/problems#unauthenticated");
    expect(noKey.headers.get("www-authenticate")).toBe('Bearer realm="api"');
    expect(
      (
        await call(base, "GET", "/api/v1/orders/00000000-0000-4000-8000-000000000000", {
          token: "sk_test_nobody",
        })
      ).status,
    ).toBe(401);
    const { cookie } = await createTestSession();
    // The same cookie signs alice in on tRPC, so the test would notice a cookie that is simply invalid.
    expect((await call(base, "GET", "/api/trpc/account.me", { headers: { cookie } })).status).toBe(200);
    const viaCookie = await call(base, "POST", "/api/v1/orders", {
      headers: { cookie },
      body: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
    });
    expect(viaCookie.status).toBe(401);
  });
});

describe("one key across the two surfaces (decision 0037)", () => {
  it("tRPC first: the same request on REST replays the stored response in REST's form, and vice versa; it ran once", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const viaTrpc = await trpcPay(alice.token, key, visa(order.id));
    expect(viaTrpc.status, viaTrpc.text).toBe(200);
    const data = (json(viaTrpc).result as { data: unknown }).data;
    const viaRest = await restPay(base, alice.token, key, visa(order.id));
    expect(viaRest.status).toBe(200);
    expect(viaRest.headers.get("idempotent-replayed")).toBe("true");
    expect(viaRest.text).toBe(JSON.stringify(data));
    expect(await moneyFor(order.id)).toEqual({ payments: 1, charges: 1 });

    const key2 = newKey();
    const order2 = await restOrder(base, alice.token);
    const first = await restPay(base, alice.token, key2, visa(order2.id));
    const back = await trpcPay(alice.token, key2, visa(order2.id));
    expect(back.headers.get("idempotent-replayed")).toBe("true");
    expect(back.text).toBe(JSON.stringify({ result: { data: json(first) } }));
    expect(await moneyFor(order2.id)).toEqual({ payments: 1, charges: 1 });
  });

  it("another request under the same key is refused with 422 on either surface, and a declined card replays as 402 on both", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const declined = { orderId: order.id, paymentMethod: "pm_card_declined" };
    const viaTrpc = await trpcPay(alice.token, key, declined);
    expect(viaTrpc.status).toBe(402);
    const viaRest = await restPay(base, alice.token, key, declined);
    expect(viaRest.status).toBe(402);
    expect(viaRest.headers.get("idempotent-replayed")).toBe("true");
    expect(problemType(viaRest)).toBe("/docs/problems#card-declined");
    expect(json(viaRest).detail).toBe((json(viaTrpc).error as { message: string }).message);

    const restOther = await restPay(base, alice.token, key, visa(order.id));
    expect(restOther.status).toBe(422);
    expect(problemType(restOther)).toBe("/docs/problems#idempotency-key-reused");
    expect((await trpcPay(alice.token, key, visa(order.id))).status).toBe(422);
    expect(await moneyFor(order.id)).toEqual({ payments: 1, charges: 1 });
  });

  it("while the tRPC request is in flight, REST with the same key is told 409 + Retry-After", async () => {
    const key = newKey();
    const order = await restOrder(base, alice.token);
    const slow = { orderId: order.id, paymentMethod: "pm_card_slow" };
    const viaTrpc = trpcPay(alice.token, key, slow);
    await new Promise((r) => setTimeout(r, 300));
    const viaRest = await restPay(base, alice.token, key, slow);
    const first = await viaTrpc;
    // On a slow machine the REST call may claim the key first; then tRPC is the one told to wait.
    const [ran, waited] = first.status === 200 ? [first, viaRest] : [viaRest, first];
    expect(ran.status, ran.text).toBe(200);
    expect(waited.status).toBe(409);
    expect(waited.headers.get("retry-after")).toBe("1");
    expect(await moneyFor(order.id)).toEqual({ payments: 1, charges: 1 });
  });
});
