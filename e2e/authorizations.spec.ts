import { randomUUID } from "node:crypto";
import type { APIRequestContext, Browser, Page } from "@playwright/test";
import pg from "pg";
import { bearer } from "./api";
import { watchMutations } from "./fixtures";
import { expect, adminTest as test } from "./refund-fixtures";

/**
 * Authorize now, capture later, against the production build and the provider: a payment made with
 * captureMethod "manual" (through the API, as a merchant's integration makes it) is held, the
 * shopper's order says so, and the operator captures part of it or cancels it on the admin's
 * Authorizations page, keyed like a refund, once.
 */

const OUTCOME = { timeout: 20_000 };
const money = (minor: number) =>
  new Intl.NumberFormat("en-IE", { style: "currency", currency: "EUR" }).format(minor / 100);

interface Authorized {
  orderId: string;
  paymentId: string;
  amountMinor: number;
}

async function authorizedOrder(request: APIRequestContext): Promise<Authorized> {
  const order = await request.post("/api/trpc/orders.create", {
    headers: bearer("sk_test_alice"),
    data: { items: [{ sku: "TEE-CLASSIC", quantity: 2 }] },
  });
  expect(order.status(), await order.text()).toBe(200);
  const orderId = (await order.json()).result.data.id as string;
  const paid = await request.post("/api/v1/payments", {
    headers: { ...bearer("sk_test_alice"), "idempotency-key": randomUUID() },
    data: { orderId, paymentMethod: "pm_card_visa", captureMethod: "manual" },
  });
  expect(paid.status(), await paid.text()).toBe(200);
  const payment = await paid.json();
  expect(payment.status).toBe("authorized");
  return { orderId, paymentId: payment.id, amountMinor: payment.amount };
}

/** The shopper's own browser (the spec's page is the operator's). */
async function shopperPage(browser: Browser, baseURL: string): Promise<Page> {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await page.goto("/signin");
  await page.getByRole("button", { name: "Alice Martin" }).click();
  await expect(page.getByText(/^Signed in as /)).toBeVisible();
  return page;
}

function authorizationOf(page: Page, paymentId: string) {
  return page.getByRole("form", { name: `Capture or cancel payment ${paymentId}` });
}

async function actionsOf(paymentId: string) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  try {
    const { rows } = await pool.query<{ kind: string; status: string; amount_minor: number | null }>(
      "SELECT kind, status, amount_minor FROM authorization_actions WHERE payment_id = $1",
      [paymentId],
    );
    return rows;
  } finally {
    await pool.end();
  }
}

test("manual capture end to end: authorized, partly captured from the admin, the rest shown released", async ({
  page,
  request,
  browser,
  baseURL,
}) => {
  const auth = await authorizedOrder(request);
  const shopper = await shopperPage(browser, baseURL ?? "");
  await shopper.goto(`/checkout?order=${auth.orderId}`);
  await expect(shopper.getByRole("heading", { name: "Authorized — charged when it ships" })).toBeVisible();
  await expect(shopper.getByTestId("payment-held")).toHaveText(money(auth.amountMinor));
  await expect(shopper.getByTestId("capture-before")).toContainText(/\d{4}/);
  await expect(shopper.getByRole("button", { name: /^Pay / })).toHaveCount(0);

  await page.goto("/admin/authorizations");
  await expect(page.getByRole("link", { name: "Authorizations" })).toHaveAttribute("aria-current", "page");
  const form = authorizationOf(page, auth.paymentId);
  const amount = form.getByLabel(/^Amount to capture/);
  await expect(amount).toHaveValue((auth.amountMinor / 100).toFixed(2));
  const captured = auth.amountMinor - 500;
  await amount.fill((captured / 100).toFixed(2));
  await form.getByRole("button", { name: "Capture" }).click();
  await expect(page.getByTestId("settle-result")).toContainText(
    `Captured ${money(captured)} of payment ${auth.paymentId}; ${money(500)} released.`,
    OUTCOME,
  );
  await expect(authorizationOf(page, auth.paymentId)).toHaveCount(0);

  await shopper.reload();
  await expect(shopper.getByRole("heading", { name: "Payment complete" })).toBeVisible();
  await expect(shopper.getByTestId("payment-amount")).toHaveText(money(captured));
  await expect(shopper.getByTestId("payment-released")).toContainText(
    `${money(500)} of the ${money(auth.amountMinor)}`,
  );
  expect(await actionsOf(auth.paymentId)).toEqual([
    { kind: "capture", status: "succeeded", amount_minor: captured },
  ]);
  await shopper.context().close();
});

test("cancel from the admin: the hold released, the shopper told nothing was charged and can pay again", async ({
  page,
  request,
  browser,
  baseURL,
}) => {
  const auth = await authorizedOrder(request);
  await page.goto("/admin/authorizations");
  await authorizationOf(page, auth.paymentId).getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByTestId("settle-result")).toContainText(
    `Canceled payment ${auth.paymentId}: the hold of ${money(auth.amountMinor)} was released.`,
    OUTCOME,
  );

  const shopper = await shopperPage(browser, baseURL ?? "");
  await shopper.goto(`/checkout?order=${auth.orderId}`);
  await expect(shopper.getByRole("alert").filter({ hasText: "nothing was charged" })).toBeVisible();
  await expect(shopper.getByRole("button", { name: /^Pay / })).toBeEnabled();
  expect(await actionsOf(auth.paymentId)).toEqual([
    { kind: "cancel", status: "succeeded", amount_minor: null },
  ]);
  await shopper.context().close();
});

test("a double click on Capture (and more presses) captures once, with one key", async ({
  page,
  request,
}) => {
  const auth = await authorizedOrder(request);
  const captures = watchMutations(
    page,
    (r) => new URL(r.url()).pathname === "/api/trpc/admin.payments.capture",
  );
  // Held a moment, so that every press lands while the first is in flight.
  await page.route("**/api/trpc/admin.payments.capture", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await route.continue();
  });
  await page.goto("/admin/authorizations");
  // By its type, not its name: the name is "Capturing…" while the first press runs.
  const capture = authorizationOf(page, auth.paymentId).locator('button[type="submit"]');
  await capture.dblclick();
  await capture.evaluate((b: HTMLButtonElement) => {
    b.disabled = false;
    b.click();
    b.disabled = false;
    b.click();
  });
  await expect(page.getByTestId("settle-result")).toContainText(
    `Captured ${money(auth.amountMinor)}`,
    OUTCOME,
  );
  await captures.settled();
  expect(new Set(captures.keys()).size).toBe(1);
  expect((await actionsOf(auth.paymentId)).map((a) => [a.kind, a.status])).toEqual([
    ["capture", "succeeded"],
  ]);
});

test("the list puts the soonest deadline first and flags one within 24 h", async ({ page, request }) => {
  const first = await authorizedOrder(request);
  const second = await authorizedOrder(request);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  await pool.query("UPDATE payments SET capture_before = now() + interval '2 hours' WHERE id = $1", [
    second.paymentId,
  ]);
  await pool.end();
  await page.goto("/admin/authorizations");
  const items = page.getByTestId("authorization");
  // Authorizations of earlier runs on a kept database may be listed too: compare these two.
  await expect(items.filter({ hasText: second.paymentId })).toHaveCount(1);
  const texts = await items.allTextContents();
  const at = (id: string) => texts.findIndex((t) => t.includes(id));
  expect(at(second.paymentId)).toBeGreaterThanOrEqual(0);
  expect(at(second.paymentId)).toBeLessThan(at(first.paymentId));
  await expect(items.filter({ hasText: second.paymentId }).getByTestId("expiring-soon")).toBeVisible();
  await expect(items.filter({ hasText: first.paymentId }).getByTestId("expiring-soon")).toHaveCount(0);
});
