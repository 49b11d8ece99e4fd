import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../env";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { call, json, newKey, type RestStack, restOrder, restPay, startRestStack } from "../test/rest-stack";

/** Capture and cancel over REST, as a client that knows only the published contract. */
let stack: RestStack;
let base: string;
let alice: TestAccount;

beforeAll(async () => {
  stack = await startRestStack();
  base = stack.url;
  alice = await createTestAccount("rest-authorizations");
});
afterAll(() => stack?.stop());

const admin = env.ADMIN_TOKEN;

async function authorized() {
  const order = await restOrder(base, alice.token, 2);
  const paid = await restPay(base, alice.token, newKey(), {
    orderId: order.id,
    paymentMethod: "pm_card_visa",
    captureMethod: "manual",
  });
  expect(paid.status).toBe(200);
  const payment = json(paid) as { id: string; status: string; amount: number; captureBefore: string };
  expect(payment.status).toBe("authorized");
  return payment;
}

describe("POST /api/v1/payments/{id}/capture and /cancel", () => {
  it("captures part with a key, replays it; the rest is released", async () => {
    const payment = await authorized();
    const key = newKey();
    const path = `/api/v1/payments/${payment.id}/capture`;
    const first = await call(base, "POST", path, { token: admin, key, body: { amountMinor: 1000 } });
    expect(first.status).toBe(200);
    expect(json(first)).toMatchObject({ status: "succeeded", amountCaptured: 1000 });
    const again = await call(base, "POST", path, { token: admin, key, body: { amountMinor: 1000 } });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
  });

  it("cancels without a body; a capture after it is 409 payment-not-capturable, stored", async () => {
    const payment = await authorized();
    const canceled = await call(base, "POST", `/api/v1/payments/${payment.id}/cancel`, {
      token: admin,
      key: newKey(),
    });
    expect(canceled.status).toBe(200);
    expect(json(canceled)).toMatchObject({ status: "canceled" });
    const key = newKey();
    const late = await call(base, "POST", `/api/v1/payments/${payment.id}/capture`, {
      token: admin,
      key,
      body: {},
    });
    expect(late.status).toBe(409);
    expect(late.headers.get("content-type")).toBe("application/problem+json");
    expect(json(late)).toMatchObject({ type: "/docs/problems#payment-not-capturable", state: "canceled" });
    expect(late.headers.get("retry-after")).toBeNull();
    const replay = await call(base, "POST", `/api/v1/payments/${payment.id}/capture`, {
      token: admin,
      key,
      body: {},
    });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("refuses a customer's key (401), a missing key (400) and a capture above the hold (400)", async () => {
    const payment = await authorized();
    const path = `/api/v1/payments/${payment.id}/capture`;
    const customer = await call(base, "POST", path, { token: alice.token, key: newKey(), body: {} });
    expect(customer.status).toBe(401);
    const keyless = await call(base, "POST", path, { token: admin, body: {} });
    expect(keyless.status).toBe(400);
    const over = await call(base, "POST", path, {
      token: admin,
      key: newKey(),
      body: { amountMinor: payment.amount + 1 },
    });
    expect(over.status).toBe(400);
    const still = await call(base, "GET", `/api/v1/payments/${payment.id}`, { token: alice.token });
    expect(json(still)).toMatchObject({ status: "authorized" });
  });
});
