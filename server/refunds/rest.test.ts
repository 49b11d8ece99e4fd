import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../env";
import { openApiDocument } from "../http/openapi";
import { handleRestRequest } from "../http/rest-handler";
import { createRegistry } from "../metrics/registry";
import { appRouter } from "../root";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { refundBooks } from "../test/refunds";
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

/** POST /api/v1/refunds as a client that knows only the published contract. */
let stack: RestStack;
let base: string;
let alice: TestAccount;

beforeAll(async () => {
  stack = await startRestStack();
  base = stack.url;
  alice = await createTestAccount("rest-refunds");
});
afterAll(() => stack?.stop());

const admin = env.ADMIN_TOKEN;
const reason = "customer returned the goods";
const problem = (a: Answer) => {
  expect(a.headers.get("content-type")).toBe("application/problem+json");
  return json(a) as { type: string; status: number; detail: string; [k: string]: unknown };
};
const postRefund = (body: unknown, key: string | undefined = newKey(), token = admin) =>
  call(base, "POST", "/api/v1/refunds", { token, key, body });

async function paidPayment(quantity = 2, paymentMethod = "pm_card_visa") {
  const order = await restOrder(base, alice.token, quantity);
  const paid = await restPay(base, alice.token, newKey(), { orderId: order.id, paymentMethod });
  return json(paid) as { id: string; amount: number; status: string };
}

describe("POST /api/v1/refunds", () => {
  it("200 with the refund; the same request again is an exact replay with Idempotent-Replayed: true", async () => {
    const payment = await paidPayment();
    const key = newKey();
    const body = { paymentId: payment.id, amountMinor: 1000, reason };
    const first = await postRefund(body, key);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(json(first)).toMatchObject({
      id: expect.any(String),
      paymentId: payment.id,
      amountMinor: 1000,
      status: "succeeded",
    });
    const again = await postRefund(body, key);
    expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([
      200,
      first.text,
      "true",
    ]);
    const other = await postRefund({ ...body, amountMinor: 999 }, key);
    expect([other.status, problem(other).type]).toEqual([422, "/docs/problems#idempotency-key-reused"]);
  });

  it("beyond what is left to refund: 422 refund-exceeds-captured, never a 5xx, replayed the same", async () => {
    const payment = await paidPayment();
    expect(
      (await postRefund({ paymentId: payment.id, amountMinor: payment.amount - 100, reason })).status,
    ).toBe(200);
    const key = newKey();
    const over = await postRefund({ paymentId: payment.id, amountMinor: 101, reason }, key);
    expect(over.status).toBe(422);
    expect(problem(over)).toMatchObject({
      type: "/docs/problems#refund-exceeds-captured",
      status: 422,
      refundableMinor: 100,
      paymentId: payment.id,
    });
    const replay = await postRefund({ paymentId: payment.id, amountMinor: 101, reason }, key);
    expect([replay.status, replay.text, replay.headers.get("idempotent-replayed")]).toEqual([
      422,
      over.text,
      "true",
    ]);
    expect(await refundBooks(payment.id)).toMatchObject({ refunded: payment.amount - 100, succeeded: 1 });
  });

  it("a declined payment is 422 payment-not-refundable; an unknown payment 404; bad input 400", async () => {
    const declined = await restPay(base, alice.token, newKey(), {
      orderId: (await restOrder(base, alice.token, 1)).id,
      paymentMethod: "pm_card_declined",
    });
    const paymentId = String(problem(declined).paymentId);
    const refused = await postRefund({ paymentId, amountMinor: 1, reason });
    expect([refused.status, problem(refused).type]).toEqual([422, "/docs/problems#payment-not-refundable"]);
    const missing = await postRefund({
      paymentId: "018f0000-0000-7000-8000-000000000000",
      amountMinor: 1,
      reason,
    });
    expect([missing.status, problem(missing).type]).toEqual([404, "/docs/problems#not-found"]);
    for (const body of [
      { paymentId, amountMinor: 0, reason },
      { paymentId, amountMinor: 1.5, reason },
      { paymentId, amountMinor: 1, reason: "" },
      { paymentId: "nope", amountMinor: 1, reason },
    ]) {
      const bad = await postRefund(body);
      expect([bad.status, problem(bad).type]).toEqual([400, "/docs/problems#invalid-request"]);
    }
  });

  it("requires the key (400) and the operators' Bearer token (401: none, a wrong one, a shopper's API key)", async () => {
    const payment = await paidPayment(1);
    const body = { paymentId: payment.id, amountMinor: 1, reason };
    const noKey = await call(base, "POST", "/api/v1/refunds", { token: admin, body });
    expect([noKey.status, problem(noKey).type]).toEqual([400, "/docs/problems#idempotency-key-missing"]);
    for (const token of [undefined, "not-the-admin-token", alice.token]) {
      const denied = await call(base, "POST", "/api/v1/refunds", { token, key: newKey(), body });
      expect([denied.status, problem(denied).type]).toEqual([401, "/docs/problems#unauthenticated"]);
    }
    expect(await refundBooks(payment.id)).toMatchObject({ succeeded: 0, pending: 0, failed: 0 });
  });
});

it("the OpenAPI document describes POST /refunds with its key header and problems", () => {
  const doc = openApiDocument(false) as unknown as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, unknown>; parameters?: { name: string }[] }>
    >;
  };
  const op = doc.paths["/refunds"]?.post;
  expect(op?.parameters?.map((p) => p.name)).toContain("Idempotency-Key");
  expect(Object.keys(op?.responses ?? {})).toEqual(
    expect.arrayContaining(["200", "400", "401", "404", "409", "422", "503"]),
  );
});

it("counts a refund's idempotency outcomes on their own, per procedure, in /api/metrics", async () => {
  const registry = createRegistry();
  const payment = await paidPayment(1);
  const key = newKey();
  const send = (amountMinor: number) =>
    handleRestRequest(
      new Request("http://localhost/api/v1/refunds", {
        method: "POST",
        headers: {
          authorization: `Bearer ${admin}`,
          "idempotency-key": key,
          "content-type": "application/json",
        },
        body: JSON.stringify({ paymentId: payment.id, amountMinor, reason }),
      }),
      appRouter,
      { metrics: registry, provider: stack.provider.client },
    );
  expect((await send(100)).status).toBe(200);
  expect((await send(100)).status).toBe(200);
  expect((await send(101)).status).toBe(422);
  const text = await registry.registry.metrics();
  for (const outcome of ["completed", "replayed", "fingerprint_mismatch"])
    expect(text).toContain(
      `idempotent_requests_total{procedure="rest:admin.refunds.create",outcome="${outcome}"} 1`,
    );
});
