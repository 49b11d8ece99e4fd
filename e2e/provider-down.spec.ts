import { randomUUID } from "node:crypto";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { bearer, payRest, payTrpc } from "./api";
import { PROVIDER_DOWN } from "./provider-down";

/**
 * The production build with its payment provider down (e2e/provider-down-server.ts). The
 * background jobs built the provider client in another layer's copy of the modules than the
 * route handlers': its errors must still be recognised there (docs/decisions/0095).
 */

async function newOrder(
  request: APIRequestContext,
  token: "sk_test_alice" | "sk_test_bob" = "sk_test_alice",
) {
  const res = await request.post("/api/trpc/orders.create", {
    headers: bearer(token),
    data: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
  });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()).result.data.id as string;
}

const waitRetryAfter = (seconds: string | undefined) =>
  new Promise((r) => setTimeout(r, Number(seconds ?? 1) * 1000 + 200));

test("a payment is 503 with Retry-After on both surfaces, never stored, while the provider is down", async ({
  request,
}) => {
  const orderId = await newOrder(request);
  const key = randomUUID();
  const viaTrpc = await payTrpc(request, orderId, key);
  expect(viaTrpc.status(), await viaTrpc.text()).toBe(503);
  expect((await viaTrpc.json()).error.data.code).toBe("SERVICE_UNAVAILABLE");
  expect(Number(viaTrpc.headers()["retry-after"])).toBeGreaterThanOrEqual(1);

  await waitRetryAfter(viaTrpc.headers()["retry-after"]);
  const viaRest = await payRest(request, orderId, key);
  expect(viaRest.status(), await viaRest.text()).toBe(503);
  expect(await viaRest.json()).toMatchObject({ type: "/docs/problems#provider-unavailable", status: 503 });
  expect(Number(viaRest.headers()["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(viaRest.headers()["idempotent-replayed"]).toBeUndefined();
});

test("admin.reconcile.run answers a report that names the provider error, and it becomes the latest", async ({
  request,
}) => {
  const asAdmin = { authorization: `Bearer ${PROVIDER_DOWN.adminToken}` };
  const run = await request.post("/api/trpc/admin.reconcile.run", { headers: asAdmin, data: {} });
  expect(run.status(), await run.text()).toBe(200);
  const report = (await run.json()).result.data;
  expect(report.providerError).toEqual(expect.stringMatching(/\S/));
  expect(report.chargesChecked).toBe(0);

  const latest = await request.get("/api/trpc/admin.reconcile.latest", { headers: asAdmin });
  expect(latest.status()).toBe(200);
  expect((await latest.json()).result.data).toMatchObject({
    id: report.id,
    providerError: report.providerError,
  });
});

test("past its payments per minute a customer is throttled: 429 with Retry-After on both surfaces", async ({
  request,
}) => {
  const asBob = bearer("sk_test_bob");
  // Orders that do not exist: each payment is a new key (it spends a point) answered 404.
  const attempt = (i: number) =>
    (i % 2 === 0 ? payRest : payTrpc)(request, randomUUID(), randomUUID(), "pm_card_visa", asBob);
  // Spent points last a minute: a rerun against a reused server may start part way.
  const statuses: number[] = [];
  let i = 0;
  while (i <= PROVIDER_DOWN.paymentsPerMinute && statuses.at(-1) !== 429)
    statuses.push((await attempt(i++)).status());
  expect(statuses.at(-1), statuses.join(" ")).toBe(429);
  expect(statuses.slice(0, -1).every((s) => s === 404)).toBe(true);

  for (const surface of [i, i + 1]) {
    const throttled = await attempt(surface);
    expect(throttled.status(), await throttled.text()).toBe(429);
    expect(Number(throttled.headers()["retry-after"])).toBeGreaterThanOrEqual(1);
  }
});
