import { expect, test } from "@playwright/test";

test("the API reference at /docs/api is one light document without script: the payments operation, its SDK sample, nothing else loaded", async ({
  page,
}) => {
  const loaded: { url: string; bytes: number }[] = [];
  page.on("requestfinished", async (request) => {
    const response = await request.response();
    loaded.push({ url: request.url(), bytes: (await response?.body())?.length ?? 0 });
  });
  const response = await page.goto("/docs/api");
  expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'none'|default-src 'none'/);
  expect(response?.headers()["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
  const document = (await response?.body())?.length ?? 0;
  // Scalar's page transferred 1.4 MB of script (compressed); this one is the document alone.
  expect(document).toBeLessThan(100_000);
  await expect(page.getByRole("heading", { name: "Idempotent Checkout API", level: 1 })).toBeVisible();
  const toc = page.getByRole("navigation", { name: "Operations" });
  await toc.getByRole("link", { name: "payments", exact: true }).click();
  await toc.getByRole("link", { name: "Pay an order (idempotent)" }).click();
  const pay = page.getByRole("region", { name: "Pay an order (idempotent)" });
  await expect(pay.getByRole("heading", { name: "Pay an order (idempotent)" })).toBeInViewport();
  await expect(pay.getByText("Idempotency-Key", { exact: true }).first()).toBeVisible();
  const sdk = pay.getByRole("figure", { name: "@idempotent-checkout/client" });
  await expect(sdk).toContainText('import { createClient, fileStore } from "@idempotent-checkout/client"');
  await expect(sdk).toContainText("client.payments.create(");
  await page.waitForLoadState("networkidle");
  // Nothing but the document (and the browser's icon request).
  const others = loaded.filter((l) => !/\/docs\/api$|\/favicon\.ico$/.test(new URL(l.url).pathname));
  expect(others).toEqual([]);
  expect(loaded.reduce((n, l) => n + l.bytes, 0)).toBeLessThan(120_000);
});

test("Scalar's explorer at /docs/api/explorer renders the same document and shows the payments operation, loading nothing from another origin", async ({
  page,
  baseURL,
}) => {
  const origin = new URL(baseURL ?? "http://127.0.0.1").origin;
  const elsewhere: string[] = [];
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) elsewhere.push(url);
  });
  const refused: string[] = [];
  page.on("console", (message) => {
    if (message.text().includes("Content Security Policy")) refused.push(message.text());
  });
  const response = await page.goto("/docs/api/explorer");
  // A CSP of its own, as strict as the pages': its scripts only, no framing.
  expect(response?.headers()["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
  await expect(page.getByRole("heading", { name: "Idempotent Checkout API" })).toBeVisible({
    timeout: 30_000,
  });
  // The sidebar lists the operations by tag: the payments tag leads to the idempotent one.
  await page.getByRole("link", { name: "payments", exact: true }).click();
  await page.getByRole("link", { name: "Pay an order (idempotent)" }).first().click();
  await expect(page.getByRole("heading", { name: "Pay an order (idempotent)" })).toBeVisible();
  await expect(page.getByText("Idempotency-Key", { exact: true }).first()).toBeVisible();
  expect(elsewhere).toEqual([]);
  expect(refused).toEqual([]);
});

test("each problem type URI points at its entry on /docs/problems", async ({ page, request }) => {
  const problem = await request.post("/api/v1/payments", {
    headers: { authorization: "Bearer sk_test_alice" },
    data: { orderId: crypto.randomUUID(), paymentMethod: "pm_card_visa" },
  });
  expect(problem.status()).toBe(400);
  expect(problem.headers()["content-type"]).toBe("application/problem+json");
  const { type } = (await problem.json()) as { type: string };
  await page.goto(type);
  const entry = page.locator(`[id="${new URL(type, "http://x").hash.slice(1)}"]`);
  await expect(entry).toContainText("Idempotency-Key is missing");
});
