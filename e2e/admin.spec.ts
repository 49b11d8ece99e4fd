import { randomUUID } from "node:crypto";
import { type APIRequestContext, expect, type Page, test } from "@playwright/test";

// The server's ADMIN_TOKEN: its default outside production unless the run sets one.
const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "admin_test";
const asAdmin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const asAlice = { authorization: "Bearer sk_test_alice" };

/** Orders and payments go through the HTTP API, as a client would send them. */
async function createOrder(request: APIRequestContext): Promise<string> {
  const res = await request.post("/api/trpc/orders.create", {
    headers: asAlice,
    data: { items: [{ sku: "TEE-CLASSIC", quantity: 1 }] },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).result.data.id;
}

function pay(request: APIRequestContext, orderId: string, key: string, paymentMethod = "pm_card_visa") {
  return request.post("/api/trpc/payments.create", {
    headers: { ...asAlice, "idempotency-key": key },
    data: { orderId, paymentMethod },
    timeout: 20_000,
  });
}

async function adminQuery(request: APIRequestContext, path: string, input?: unknown) {
  const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await request.get(`/api/trpc/${path}${query}`, { headers: asAdmin });
  expect(res.status(), `${path} answered ${await res.text()}`).toBe(200);
  return (await res.json()).result.data;
}

async function signInAsAdmin(page: Page) {
  await page.goto("/admin/signin");
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
}

/** The keys table's row for one key, found by filtering the listing on it. */
function keyRow(page: Page, key: string) {
  return page.getByRole("row").filter({ has: page.getByRole("link", { name: key }) });
}

test("admin sign-in: the token opens an httpOnly session, a wrong one does not, sign-out ends it", async ({
  page,
  context,
  request,
}) => {
  // A claim in the last hour, so the overview's chart has a strip (empty outcomes are folded).
  expect((await pay(request, await createOrder(request), randomUUID())).status()).toBe(200);
  await page.goto("/admin/keys");
  await expect(page).toHaveURL(/\/admin\/signin$/);

  await page.getByLabel("Admin token").fill("not-the-admin-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "That is not the admin token." })).toBeVisible();
  expect((await context.cookies()).find((c) => c.name === "checkout_admin")).toBeUndefined();

  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/admin$/);
  const outcomes = page.getByRole("figure", { name: /Idempotency outcomes per minute/ });
  await expect(outcomes).toBeVisible();
  await expect(outcomes.getByRole("img", { name: /^Claimed: [1-9]\d* in the last hour/ })).toBeVisible();
  const cookie = (await context.cookies()).find((c) => c.name === "checkout_admin");
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
  expect(await page.evaluate(() => document.cookie)).not.toContain("checkout_admin");

  await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Keys" }).click();
  await expect(page.getByRole("heading", { name: "Idempotency keys" })).toBeVisible();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/admin\/signin$/);
  await page.goto("/admin");
  await expect(page).toHaveURL(/\/admin\/signin$/);
  // The session ended on the server: a copy of the old cookie opens nothing.
  const copy = { cookie: `checkout_admin=${cookie?.value}` };
  expect((await page.request.get("/api/trpc/admin.keys.counts", { headers: copy })).status()).toBe(401);
});

test("after a double-click checkout the key is completed with its response and the order has one ledger transaction", async ({
  page,
  request,
}) => {
  const orderId = await createOrder(request);
  const key = randomUUID();
  const [first, second] = await Promise.all([pay(request, orderId, key), pay(request, orderId, key)]);
  const answers = [first, second].map((r) => r.status()).sort();
  // One request ran; its twin was told to wait (409) or was answered with the replay (200).
  expect([
    [200, 200],
    [200, 409],
  ]).toContainEqual(answers);
  const payment = (await (first.status() === 200 ? first : second).json()).result.data;
  expect(payment).toMatchObject({ orderId, status: "succeeded" });

  await signInAsAdmin(page);
  await page.goto(`/admin/keys?q=${key}`);
  await expect(page.locator("table.keys tbody tr")).toHaveCount(1);
  const row = keyRow(page, key);
  await expect(row.getByText("completed", { exact: true })).toBeVisible();
  await expect(row.getByText("200", { exact: true })).toBeVisible();

  await row.getByRole("link", { name: key }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(key);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("completed");
  await expect(page.getByRole("heading", { name: "Stored response · HTTP 200" })).toBeVisible();
  const stored = page.getByRole("region", { name: "Stored response body" });
  await expect(stored).toContainText(`"id": "${payment.id}"`);
  await expect(stored).toContainText(`"status": "succeeded"`);
  await expect(page.getByRole("region", { name: "Stored request parameters" })).toContainText(
    `"orderId": "${orderId}"`,
  );
  await expect(page.getByText(payment.providerChargeId, { exact: true })).toBeVisible();
  const history = page.getByRole("list").filter({ has: page.locator(".event") });
  await expect(history.getByRole("listitem").first()).toContainText("Claimed");
  await expect(history.getByRole("listitem").last()).toContainText("Completed");

  await page.getByRole("link", { name: orderId }).click();
  await expect(page.getByRole("heading", { name: "Payments (1)" })).toBeVisible();
  await expect(page.getByRole("table", { name: /^Ledger transaction/ })).toHaveCount(1);
  await expect(page.getByText("balanced (0)")).toBeVisible();

  // The same facts through the admin API.
  const order = await adminQuery(request, "admin.orders.get", { orderId });
  expect(order.payments).toHaveLength(1);
  expect(order.payments[0].ledgerTransactions).toHaveLength(1);
  expect(order.payments[0].charge).toMatchObject({ state: "found", charge: { status: "succeeded" } });
  const detail = await adminQuery(request, "admin.keys.get", { accountId: order.accountId, key });
  expect(detail).toMatchObject({ state: "completed", responseStatus: 200, responseBody: { data: payment } });
  expect((await adminQuery(request, "admin.ledger.verify")).balanced).toBe(true);
});

test("a pm_card_slow payment shows as in progress while it runs, then completed without a reload", async ({
  page,
  request,
}) => {
  await signInAsAdmin(page);
  await page.goto("/admin/keys");
  const orderId = await createOrder(request);
  const key = randomUUID();

  const slow = pay(request, orderId, key, "pm_card_slow");
  const startedAt = Date.now();
  await expect
    .poll(async () => (await adminQuery(request, "admin.keys.list", { search: key })).items.length, {
      intervals: [25],
      timeout: 1_500,
    })
    .toBe(1);
  await page.goto(`/admin/keys?q=${key}`);
  await expect(keyRow(page, key).getByText("in progress", { exact: true })).toBeVisible({ timeout: 500 });
  // The provider holds pm_card_slow for 2 s: the page must have shown it inside that window.
  expect(Date.now() - startedAt).toBeLessThan(2_000);

  expect((await slow).status()).toBe(200);
  // The listing refreshes itself every 3 s.
  await expect(keyRow(page, key).getByText("completed", { exact: true })).toBeVisible({ timeout: 8_000 });
  await expect(keyRow(page, key).getByRole("cell", { name: "200", exact: true })).toBeVisible();
});

test("a customer session gets no admin data", async ({ page, context, request }) => {
  await page.goto("/signin");
  await page.getByRole("button", { name: "Alice Martin" }).click();
  await expect(page.getByText("Signed in as Alice Martin.")).toBeVisible();

  for (const path of ["/admin", "/admin/keys", "/admin/ledger", "/admin/keys/1"]) {
    await page.goto(path);
    await expect(page, path).toHaveURL(/\/admin\/signin$/);
    await expect(page.getByLabel("Admin token")).toBeVisible();
  }

  // The page's cookies (the customer session) on the API.
  expect((await page.request.get("/api/trpc/admin.keys.list")).status()).toBe(401);
  expect((await page.request.get("/api/metrics")).status()).toBe(401);
  // The customer's session value presented as the admin cookie: signed for another role.
  const session = (await context.cookies()).find((c) => c.name.endsWith("checkout.session_token"));
  expect(session).toBeDefined();
  const forged = { cookie: `checkout_admin=${session?.value}` };
  expect((await request.get("/api/metrics", { headers: forged })).status()).toBe(401);
  expect((await request.get("/api/trpc/admin.ledger.verify", { headers: forged })).status()).toBe(401);

  // The customer's API token.
  for (const path of ["admin.keys.list", "admin.ledger.verify", "admin.reconcile.latest"]) {
    expect((await request.get(`/api/trpc/${path}`, { headers: asAlice })).status(), path).toBe(401);
  }
  const run = await request.post("/api/trpc/admin.reconcile.run", { headers: asAlice, data: {} });
  expect(run.status()).toBe(401);
  expect((await request.get("/api/metrics", { headers: asAlice })).status()).toBe(401);

  // The admin token opens both.
  const metrics = await request.get("/api/metrics", { headers: asAdmin });
  expect(metrics.status()).toBe(200);
  expect(metrics.headers()["content-type"]).toContain("text/plain");
  expect(await metrics.text()).toMatch(/^idempotency_outcomes_total\{outcome="claimed"\} \d+$/m);
  expect((await adminQuery(request, "admin.keys.list", { limit: 1 })).items).toHaveLength(1);
});

test.describe("at a phone's width", () => {
  const PHONE = { width: 390, height: 844 };
  test.use({ viewport: PHONE, isMobile: true, hasTouch: true });

  test("every admin page fits the screen and its content is reachable", async ({
    page,
    request,
  }, testInfo) => {
    const orderId = await createOrder(request);
    const key = randomUUID();
    expect((await pay(request, orderId, key)).status()).toBe(200);
    await signInAsAdmin(page);

    const fitsTheScreen = async (name: string) => {
      // Against the device's width: a mobile browser widens its layout viewport to fit wide content.
      const overflow = (await page.evaluate(() => document.documentElement.scrollWidth)) - PHONE.width;
      expect(overflow, `${name} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      await page.screenshot({ path: testInfo.outputPath(`phone-${name}.png`), fullPage: true });
    };

    const outcomes = page.getByRole("figure", { name: /Idempotency outcomes per minute/ });
    await expect(outcomes.getByRole("img", { name: /^Claimed:/ })).toBeInViewport();
    await fitsTheScreen("overview");

    await page.goto(`/admin/keys?q=${key}`);
    const row = keyRow(page, key);
    // A row is a card: each value is labelled in place of the hidden column headers.
    await expect(page.getByRole("columnheader", { name: "State" })).toBeHidden();
    await expect(row.getByText("completed", { exact: true })).toBeVisible();
    await expect(row.getByText("200", { exact: true })).toBeVisible();
    await fitsTheScreen("keys");

    await row.getByRole("link", { name: key }).tap();
    await expect(page.getByRole("heading", { name: "Stored response · HTTP 200" })).toBeVisible();
    await fitsTheScreen("key");

    await page.getByRole("link", { name: orderId }).tap();
    await expect(page.getByRole("table", { name: /^Ledger transaction/ })).toHaveCount(1);
    await fitsTheScreen("order");

    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Ledger" }).tap();
    await expect(page.getByRole("heading", { name: "The books balance" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Run reconciliation now" })).toBeVisible();
    await fitsTheScreen("ledger");
  });
});

test("the ledger page checks the books and runs the reconciler on demand", async ({ page }) => {
  await signInAsAdmin(page);
  await page.goto("/admin/ledger");
  await expect(page.getByRole("heading", { name: "The books balance" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Account balances" })).toBeVisible();
  const reconciler = page.getByRole("region", { name: "Reconciliation with the provider" });
  const reportId = reconciler.getByTestId("report-id");
  const before = (await reportId.count()) > 0 ? await reportId.textContent() : null;
  await reconciler.getByRole("button", { name: "Run reconciliation now" }).click();
  await expect(reportId).toBeVisible();
  await expect(reportId).not.toHaveText(before ?? "");
  await expect(reconciler.getByText("Charges checked")).toBeVisible();
});

// Last: its reconciliation would share the ledger test's report-id prefix (ids are time-ordered).
test("the security page lists admin sessions and the audit log; an operator ends another browser's session", async ({
  page,
  browser,
}) => {
  await signInAsAdmin(page);
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await signInAsAdmin(otherPage);
  const otherCookie = (await other.cookies()).find((c) => c.name === "checkout_admin");

  // A state-changing action by the first session, through the page.
  await page.goto("/admin/ledger");
  await page.getByRole("button", { name: "Run reconciliation now" }).click();
  await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Audit" }).click();
  const audit = page.getByRole("table", { name: "Audit log" });
  await expect(audit.getByRole("row").filter({ hasText: "reconcile.run" }).first()).toContainText(
    /session [0-9a-f-]{36}/,
  );

  // The newest live session is the other browser's: end it from here.
  const otherSessionId = (await page.request.get("/api/trpc/admin.sessions.list").then((r) => r.json()))
    .result.data[0].id as string;
  await page.getByRole("button", { name: `End session ${otherSessionId}` }).click();
  await expect(page.getByRole("button", { name: `End session ${otherSessionId}` })).toHaveCount(0);
  await expect(audit.getByRole("row").filter({ hasText: `admin session ${otherSessionId}` })).toContainText(
    "sessions.end",
  );
  await otherPage.goto("/admin");
  await expect(otherPage).toHaveURL(/\/admin\/signin$/);
  expect(otherCookie).toBeDefined();
  await other.close();
});
