import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { call, json, newKey, type RestStack, restOrder, restPay, startRestStack } from "./testing/rest-stack";

let stack: RestStack;
let alice: TestAccount;
let base: string;

beforeAll(async () => {
  stack = await startRestStack();
  base = stack.url;
  alice = await createTestAccount("rest");
});
afterAll(() => stack?.stop());

const PROBLEM = "application/problem+json";

describe("REST surface", () => {
  it("smoke", async () => {
    const products = await call(base, "GET", "/api/v1/products");
    console.log(products.status, products.text.slice(0, 200));
    const order = await restOrder(base, alice.token);
    console.log(order);
    const key = newKey();
    const first = await restPay(base, alice.token, key, { orderId: order.id, paymentMethod: "pm_card_visa" });
    console.log(first.status, [...first.headers], first.text);
    const again = await restPay(base, alice.token, key, { orderId: order.id, paymentMethod: "pm_card_visa" });
    console.log(again.status, [...again.headers], again.text);
    const other = await restPay(base, alice.token, key, {
      orderId: order.id,
      paymentMethod: "pm_card_declined",
    });
    console.log(other.status, [...other.headers], other.text);
    const none = await restPay(base, alice.token, undefined, {
      orderId: order.id,
      paymentMethod: "pm_card_declined",
    });
    console.log(none.status, [...none.headers], none.text);
    const getp = await call(base, "GET", `/api/v1/payments/${json(first).id}`, { token: alice.token });
    console.log(getp.status, getp.text);
    const geto = await call(base, "GET", `/api/v1/orders/${order.id}`, { token: alice.token });
    console.log(geto.status, geto.text);
    const bad = await call(base, "GET", `/api/v1/orders/nope`, { token: alice.token });
    console.log(bad.status, bad.text);
    expect(PROBLEM).toBeTruthy();
    void db;
  });
});
