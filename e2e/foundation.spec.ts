import { expect, test } from "@playwright/test";

test("health: liveness, readiness (the database answered), and the older /api/health", async ({
  request,
}) => {
  const live = await request.get("/api/health/live");
  expect([live.status(), await live.json()]).toEqual([200, { status: "ok" }]);
  for (const path of ["/api/health/ready", "/api/health"]) {
    const res = await request.get(path);
    expect([res.status(), await res.json()], path).toEqual([200, { status: "ok", database: "up" }]);
  }
});

test("a shopper signs in as a demo customer and sees the catalogue", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Demo customer").selectOption("alice");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("Signed in as Alice Martin.")).toBeVisible();
  await expect(page.getByRole("list", { name: "Products" }).getByRole("listitem")).toHaveCount(5);
});

test("protected procedures answer 401 without a valid token", async ({ request }) => {
  expect((await request.get("/api/trpc/account.me")).status()).toBe(401);
  const bad = await request.get("/api/trpc/account.me", {
    headers: { authorization: "Bearer sk_test_nobody" },
  });
  expect(bad.status()).toBe(401);
  const good = await request.get("/api/trpc/account.me", {
    headers: { authorization: "Bearer sk_test_bob" },
  });
  expect(good.status()).toBe(200);
  expect((await good.json()).result.data.handle).toBe("bob");
});

test("the README's API example: catalogue, an order, and an idempotent payment replayed", async ({
  request,
}) => {
  const catalog = await request.get("/api/trpc/catalog.list");
  expect((await catalog.json()).result.data).toContainEqual(
    expect.objectContaining({ sku: "TEE-CLASSIC", price: 2500 }),
  );
  const auth = { authorization: "Bearer sk_test_alice" };
  const order = await request.post("/api/trpc/orders.create", {
    headers: auth,
    data: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
  });
  const orderId = (await order.json()).result.data.id as string;
  const headers = { ...auth, "idempotency-key": crypto.randomUUID() };
  const data = { orderId, paymentMethod: "pm_card_visa" };
  const first = await request.post("/api/trpc/payments.create", { headers, data });
  expect(first.status()).toBe(200);
  expect((await first.json()).result.data).toMatchObject({
    orderId,
    amount: 2500,
    currency: "EUR",
    status: "succeeded",
  });
  const again = await request.post("/api/trpc/payments.create", { headers, data });
  expect(again.headers()["idempotent-replayed"]).toBe("true");
  expect(await again.text()).toBe(await first.text());
});
