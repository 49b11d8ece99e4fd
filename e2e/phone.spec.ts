import AxeBuilder from "@axe-core/playwright";
import { type Browser, expect, type Page, test } from "@playwright/test";

// A shopper who signed up themselves, with an email far longer than the demo's "Alice Martin",
// on a 412 px phone and a 1280 px desktop: every shopper page stays within the window and axe
// finds no WCAG A/AA violation on it, before and after paying.

const PASSWORD = "correct horse battery staple";
const EMAIL = `a.very.long.mailbox.name.for.testing-${Date.now()}@subdomain.example-company.example`;
const WIDTHS = [
  { name: "phone", width: 412, height: 915 },
  { name: "desktop", width: 1280, height: 800 },
] as const;
const WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"];

type StorageState = Awaited<ReturnType<Awaited<ReturnType<Browser["newContext"]>>["storageState"]>>;
let shopper: StorageState;
let paidOrder = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ browser }, info) => {
  expect(EMAIL.length).toBeGreaterThanOrEqual(60);
  const context = await browser.newContext({ baseURL: info.project.use.baseURL, viewport: WIDTHS[0] });
  const page = await context.newPage();
  await page.goto("/signup");
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await expect(page.getByRole("main").getByRole("status")).toHaveText(/Your account is ready/);
  await page.goto("/signin");
  await page.getByRole("main").getByLabel("Email").fill(EMAIL);
  await page.getByRole("main").getByLabel("Password").fill(PASSWORD);
  await page.getByRole("main").getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  shopper = await context.storageState();
  await context.close();
});

async function shopperPage(
  browser: Browser,
  baseURL: string | undefined,
  viewport: { width: number; height: number },
) {
  const context = await browser.newContext({ baseURL, viewport, storageState: shopper });
  const page = await context.newPage();
  // Every request the pages make: none may be a missing favicon (or anything else missing).
  const missing: string[] = [];
  page.on("response", (r) => {
    if (r.status() === 404 && r.request().resourceType() !== "fetch") missing.push(r.url());
  });
  return { page, missing, close: () => context.close() };
}

async function expectFitsAndAccessible(page: Page, what: string) {
  const widths = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
  }));
  expect(
    widths.scroll,
    `${what}: page is ${widths.scroll} px wide in a ${widths.inner} px window`,
  ).toBeLessThanOrEqual(widths.inner);
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_AA).analyze();
  expect(
    violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    `${what}: axe A/AA violations`,
  ).toEqual([]);
}

test("at 412 px the long email is cut in the header, and Pay takes the tap: the page becomes the order's confirmation", async ({
  browser,
  baseURL,
}) => {
  const { page, close } = await shopperPage(browser, baseURL, WIDTHS[0]);
  await page.goto("/");
  const account = page.getByRole("banner").getByRole("link", { name: `Account of ${EMAIL}` });
  await expect(account).toHaveAttribute("title", EMAIL);
  const box = await account.boundingBox();
  expect(box?.width ?? 0).toBeLessThan(412 * 0.6);
  const products = page.getByRole("list", { name: "Products" }).getByRole("listitem");
  await products
    .nth(0)
    .getByRole("button", { name: /^Add to cart/ })
    .click();
  await expect(page.getByRole("link", { name: /^Cart/ })).toHaveText(/1/);
  await page.getByRole("link", { name: /^Cart/ }).click();
  await page.getByRole("button", { name: "Proceed to checkout" }).click();
  await page.waitForURL(/\/checkout\?order=/);
  paidOrder = new URL(page.url()).searchParams.get("order") ?? "";
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Checkout");
  await expectFitsAndAccessible(page, "/checkout before paying (412 px)");

  // A click Playwright delivers only if Pay itself is the element hit at that point.
  await page.getByRole("button", { name: /^Pay / }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Paid", { timeout: 30_000 });
  await expect(page.getByRole("heading", { name: "Payment complete" })).toBeVisible();
  await expect(page.getByTestId("payment-status")).toHaveText("succeeded");
  await expect(page.getByTestId("receipt-date")).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/, {
    timeout: 20_000,
  });
  await expect(page.getByRole("heading", { name: "What happens next" })).toBeVisible();
  await expectFitsAndAccessible(page, "/checkout paid (412 px)");

  // The paid order heads the account's history, with its status and total.
  await page.getByRole("link", { name: "your orders" }).click();
  const newest = page.getByTestId("order-history").getByRole("row").nth(1);
  await expect(newest).toContainText(paidOrder.slice(0, 8));
  await expect(newest).toContainText("paid");
  await close();
});

test("the one-time API key has a copy button, and Revoke asks before it revokes", async ({
  browser,
  baseURL,
}) => {
  const { page, close } = await shopperPage(browser, baseURL, WIDTHS[0]);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("/account");
  await page.getByLabel("Key name").fill("phone sync");
  await page.getByRole("button", { name: "Create API key" }).click();
  const secret = (await page.getByLabel("New API key").textContent()) ?? "";
  expect(secret).toMatch(/^sk_/);
  await page.getByRole("button", { name: "Copy the key" }).click();
  await expect(page.getByText("Copied")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await expectFitsAndAccessible(page, "/account with a new key (412 px)");

  await page.reload();
  await page.getByRole("button", { name: "Revoke phone sync" }).click();
  await expect(page.getByRole("button", { name: "Revoke key" })).toBeFocused();
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("list", { name: "API keys" })).toContainText("phone sync");
  await page.getByRole("button", { name: "Revoke phone sync" }).click();
  await page.getByRole("button", { name: "Revoke key" }).click();
  await expect(page.getByText("No API keys yet.")).toBeVisible();
  await close();
});

const PAGES = [
  "/",
  "/cart",
  "/checkout",
  "/account",
  "/signin",
  "/signup",
  "/docs/api",
  "/docs/problems",
  "paid order",
];

for (const viewport of WIDTHS) {
  for (const path of PAGES) {
    test(`${path} fits ${viewport.width} px, passes axe (A/AA) and asks for nothing missing`, async ({
      browser,
      baseURL,
    }) => {
      const { page, missing, close } = await shopperPage(browser, baseURL, viewport);
      await page.goto(path === "paid order" ? `/checkout?order=${paidOrder}` : path);
      if (path === "paid order") await expect(page.getByTestId("receipt-date")).toBeVisible();
      await expectFitsAndAccessible(page, `${path} (${viewport.width} px)`);
      expect(missing).toEqual([]);
      await close();
    });
  }
}

// The console pages issue 42 changed: the overview's charts (a scale, empty rows folded), the
// shared lists, and an order with the refund's confirmation open. The operator is the token's.
const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "admin_test";

for (const viewport of WIDTHS) {
  test(`the console's overview, lists and refund confirmation fit ${viewport.width} px and pass axe (A/AA)`, async ({
    browser,
    baseURL,
  }) => {
    const context = await browser.newContext({ baseURL, viewport });
    const page = await context.newPage();
    await page.goto("/admin/signin");
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
    const outcomes = page.getByRole("figure", { name: /Idempotency outcomes per minute/ });
    // The shopper paid in this file's first test: a strip with its scale, the rest folded.
    await expect(outcomes.getByRole("img", { name: /^Claimed: [1-9]\d* in the last hour/ })).toBeVisible();
    const folded = outcomes.locator("details.chart-empty");
    if ((await folded.count()) > 0) {
      await folded.locator("summary").click();
      await expect(folded.getByRole("listitem").first()).toBeVisible();
    }
    await expectFitsAndAccessible(page, `/admin (${viewport.width} px)`);
    for (const path of ["/admin/orders", "/admin/payments", "/admin/refunds"]) {
      await page.goto(path);
      await expect(page.getByRole("form", { name: /^Search / })).toBeVisible();
      await expectFitsAndAccessible(page, `${path} (${viewport.width} px)`);
    }
    await page.goto(`/admin/orders/${paidOrder}`);
    const form = page.getByRole("form", { name: /^Refund payment / });
    await form.getByLabel("Reason").fill("a long reason, to see the confirmation wrap on a phone");
    await form.getByRole("button", { name: "Refund" }).click();
    await expect(form.getByRole("group", { name: "Confirm the refund" })).toBeVisible();
    await expectFitsAndAccessible(page, `an order's refund confirmation (${viewport.width} px)`);
    await form.getByRole("button", { name: "Cancel" }).click();
    await context.close();
  });
}
