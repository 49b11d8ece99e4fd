import type { Page } from "@playwright/test";
import { expect, type Order, test, watchPayments } from "./fixtures";

/**
 * The shopper's 3-D Secure step against the production build and the provider's challenge page:
 * the checkout sends the browser to the bank, resumes the same intent (same key) on the way back,
 * and whatever the shopper does there (complete, fail, abandon, reload, a second tab) the order is
 * paid at most once and the page tells the truth.
 */

const OUTCOME = { timeout: 20_000 };
// playwright.config.ts gives the server PAYMENT_ACTION_TIMEOUT_SECONDS=30.
const ACTION_TIMEOUT_MS = 30_000;

async function payWith3ds(page: Page, order: Order) {
  await page.goto(`/checkout?order=${order.id}`);
  await page.getByRole("radio", { name: /3-D Secure test card/ }).check();
  await page.getByRole("button", { name: /^Pay / }).click();
  await expect(
    page.getByRole("status").filter({ hasText: "Your bank asks you to confirm this payment" }),
  ).toBeVisible();
  await expect(page.getByRole("button", { name: "Complete authentication" })).toBeVisible(OUTCOME);
}

async function expectPaid(page: Page) {
  await expect(page.getByRole("heading", { name: "Payment complete" })).toBeVisible(OUTCOME);
  await expect(page.getByTestId("payment-status")).toHaveText("succeeded");
  return (await page.getByTestId("payment-id").textContent()) ?? "";
}

test("3-D Secure completed: back on the checkout the same intent (one key) is paid once", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  await payWith3ds(page, order);
  await page.getByRole("button", { name: "Complete authentication" }).click();
  await expect(page).toHaveURL(/\/checkout\?order=.*redirect_status=succeeded/);
  const paymentId = await expectPaid(page);

  await payments.settled();
  expect(new Set(payments.keys()).size).toBe(1);
  expect(payments.exchanges.length).toBeGreaterThanOrEqual(2);
  const trail = await shop.trail(order.id);
  expect(trail.payments).toEqual([expect.objectContaining({ id: paymentId, status: "succeeded" })]);
  expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
  expect(trail.ledgerTransactions).toBe(1);
});

test("3-D Secure failed: nothing charged, and the shopper can pay again", async ({ page, shop }) => {
  const order = await shop.newOrder();
  await payWith3ds(page, order);
  await page.getByRole("button", { name: "Fail authentication" }).click();
  await expect(page).toHaveURL(/\/checkout\?order=.*redirect_status=failed/);
  await expect(page.getByRole("alert").filter({ hasText: "Nothing was charged" })).toBeVisible(OUTCOME);

  await page.getByRole("radio", { name: /^Visa test card/ }).check();
  await page.getByRole("button", { name: /^Pay / }).click();
  await expectPaid(page);
  const trail = await shop.trail(order.id);
  expect(trail.payments.map((p) => p.status)).toEqual(["declined", "succeeded"]);
  expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
  expect(trail.ledgerTransactions).toBe(1);
});

test("3-D Secure abandoned: after the timeout the payment is canceled, nothing charged, the order payable", async ({
  page,
  shop,
}) => {
  test.setTimeout(ACTION_TIMEOUT_MS + 90_000);
  const order = await shop.newOrder();
  await payWith3ds(page, order);
  // The shopper leaves the bank's page and comes back to the checkout later.
  await page.goto(`/checkout?order=${order.id}`);
  await expect(page.getByTestId("bank-step")).toBeVisible(OUTCOME);
  await expect(page.getByRole("link", { name: "Continue to your bank" })).toBeVisible();
  await page.waitForTimeout(ACTION_TIMEOUT_MS + 2_000);
  await page.reload();
  await expect(page.getByRole("alert").filter({ hasText: "Nothing was charged" })).toBeVisible(OUTCOME);

  await page.getByRole("radio", { name: /^Visa test card/ }).check();
  await page.getByRole("button", { name: /^Pay / }).click();
  await expectPaid(page);
  const trail = await shop.trail(order.id);
  expect(trail.payments.map((p) => p.status)).toEqual(["canceled", "succeeded"]);
  expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
});

test("a reload during the challenge, and of the checkout meanwhile, resumes the same payment", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  await payWith3ds(page, order);
  await page.reload();
  await expect(page.getByRole("button", { name: "Complete authentication" })).toBeVisible();
  // Back on the checkout and reloaded there: the step waits, no Pay button, no new key.
  await page.goBack();
  await page.reload();
  await expect(page.getByTestId("bank-step")).toBeVisible(OUTCOME);
  await expect(page.getByRole("button", { name: /^Pay / })).toHaveCount(0);
  await page.getByRole("link", { name: "Continue to your bank" }).click();
  await page.getByRole("button", { name: "Complete authentication" }).click();
  const paymentId = await expectPaid(page);

  await payments.settled();
  expect(new Set(payments.keys()).size).toBe(1);
  const trail = await shop.trail(order.id);
  expect(trail.payments).toEqual([expect.objectContaining({ id: paymentId, status: "succeeded" })]);
  expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
});

test("a second tab during the challenge shows the step, not a second Pay; the order is paid once", async ({
  page,
  context,
  shop,
}) => {
  const order = await shop.newOrder();
  await payWith3ds(page, order);
  const second = await context.newPage();
  const secondPayments = watchPayments(second);
  await second.goto(`/checkout?order=${order.id}`);
  await expect(second.getByTestId("bank-step")).toBeVisible(OUTCOME);
  await expect(second.getByRole("button", { name: /^Pay / })).toHaveCount(0);

  await page.getByRole("button", { name: "Complete authentication" }).click();
  const paymentId = await expectPaid(page);
  await second.reload();
  await expect(second.getByTestId("payment-id")).toHaveText(paymentId, OUTCOME);

  await secondPayments.settled();
  const trail = await shop.trail(order.id);
  // The second tab resumed the first tab's intent: its requests carried that payment's key.
  expect(secondPayments.keys().every((k) => k === trail.payments[0]?.key)).toBe(true);
  expect(trail.payments).toEqual([expect.objectContaining({ id: paymentId, status: "succeeded" })]);
  expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
});
