import { randomUUID } from "node:crypto";
import { type Browser, expect, type Page, test } from "@playwright/test";

// Named operators by role (decision 0200), through the production build: an owner adds people, a
// viewer reads but cannot refund (the server refuses and the audit log names them), and a removed
// operator is signed out at once.

const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "admin_test";
const asAlice = { authorization: "Bearer sk_test_alice" };

async function signIn(page: Page, secret: string, email = "") {
  await page.goto("/admin/signin");
  if (email) await page.getByLabel("Operator email").fill(email);
  await page.getByLabel("Your secret, or the admin token").fill(secret);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
}

async function invite(owner: Page, name: string, role: "viewer" | "operator" | "owner") {
  const email = `${name.toLowerCase().replace(/\W+/g, ".")}.${randomUUID().slice(0, 6)}@ops.example`;
  await owner.goto("/admin/operators");
  await owner.getByLabel("Name").fill(name);
  await owner.getByLabel("Email").fill(email);
  await owner.getByLabel("Role", { exact: true }).selectOption(role);
  await owner.getByRole("button", { name: "Add operator" }).click();
  const secret = (await owner.getByTestId("operator-secret").textContent())?.trim() ?? "";
  expect(secret).toMatch(/^op_/);
  return { email, secret };
}

async function newPage(browser: Browser) {
  const context = await browser.newContext();
  return { context, page: await context.newPage() };
}

test("the console has its own layout: one navigation, one Sign out, no shop header", async ({ page }) => {
  await signIn(page, ADMIN_TOKEN);
  await expect(page.getByRole("button", { name: "Sign out" })).toHaveCount(1);
  await expect(page.getByRole("navigation", { name: "Main" })).toBeHidden();
  const nav = page.getByRole("navigation", { name: "Admin" });
  for (const section of [
    "Overview",
    "Orders",
    "Payments",
    "Refunds",
    "Authorizations",
    "Webhooks",
    "Keys",
    "Ledger",
    "Audit",
    "Operators",
  ])
    await expect(nav.getByRole("link", { name: section, exact: true })).toBeVisible();
  await expect(page.getByTestId("admin-who")).toHaveText("Admin token · owner");
});

test("a viewer reads the lists but cannot refund; the refusal is in the audit log with their name", async ({
  page,
  browser,
  request,
}) => {
  const order = await request.post("/api/trpc/orders.create", {
    headers: asAlice,
    data: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
  });
  const orderId = (await order.json()).result.data.id as string;
  const paid = await request.post("/api/trpc/payments.create", {
    headers: { ...asAlice, "idempotency-key": randomUUID() },
    data: { orderId, paymentMethod: "pm_card_visa" },
  });
  const paymentId = (await paid.json()).result.data.id as string;

  await signIn(page, ADMIN_TOKEN);
  const vera = await invite(page, "Vera Viewer", "viewer");
  const viewer = await newPage(browser);
  await signIn(viewer.page, vera.secret, vera.email);
  await expect(viewer.page.getByTestId("admin-who")).toHaveText("Vera Viewer · viewer");

  await viewer.page.goto(`/admin/payments?q=${paymentId}`);
  await expect(viewer.page.getByRole("table", { name: "Payments" }).getByRole("row")).toHaveCount(2);
  await viewer.page.goto(`/admin/orders?q=${paymentId}`);
  await expect(viewer.page.getByRole("link", { name: orderId })).toBeVisible();

  // The page's own session, as the console's refund form would send it.
  const status = await viewer.page.evaluate(
    async ({ paymentId, key }) =>
      (
        await fetch("/api/trpc/admin.refunds.create", {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ paymentId, amountMinor: 100, reason: "viewer tries" }),
        })
      ).status,
    { paymentId, key: randomUUID() },
  );
  expect(status).toBe(403);

  await page.goto("/admin/audit");
  const refused = page
    .getByRole("table", { name: "Audit log" })
    .getByRole("row")
    .filter({ hasText: `Vera Viewer <${vera.email}>` })
    .filter({ hasText: "admin.refunds.create" });
  await expect(refused.first()).toContainText("refused procedure");
  await expect(refused.first()).toContainText("FORBIDDEN");
  await viewer.context.close();
});

test("a removed operator is signed out at once", async ({ page, browser }) => {
  await signIn(page, ADMIN_TOKEN);
  const otto = await invite(page, "Otto Operator", "operator");
  const operator = await newPage(browser);
  await signIn(operator.page, otto.secret, otto.email);
  await operator.page.goto("/admin/payments");
  await expect(operator.page.getByRole("heading", { name: "Payments", level: 1 })).toBeVisible();

  await page.goto("/admin/operators");
  await page.getByRole("button", { name: "Remove Otto Operator" }).first().click();
  await expect(
    page.getByRole("row").filter({ hasText: otto.email }).filter({ hasText: "removed" }),
  ).toBeVisible();

  await operator.page.goto("/admin/payments");
  await expect(operator.page).toHaveURL(/\/admin\/signin$/);
  // The secret no longer opens the console either.
  await operator.page.getByLabel("Operator email").fill(otto.email);
  await operator.page.getByLabel("Your secret, or the admin token").fill(otto.secret);
  await operator.page.getByRole("button", { name: "Sign in" }).click();
  await expect(operator.page.locator("p[role=alert]")).toHaveText(
    "That email and secret do not match an operator.",
  );
  await operator.context.close();
});
