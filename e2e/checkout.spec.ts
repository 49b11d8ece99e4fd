import type { Page } from "@playwright/test";
import { expect, isPaymentRequest, type MoneyTrail, test, watchPayments } from "./fixtures";

/**
 * The shopper's checkout against the real server, database and provider. Each test pays its
 * own order and then checks the money trail where it lives: one charge at the provider, one
 * payment row, one ledger transaction, whatever the network or the shopper did.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// The slow card answers after 2 s and retries wait Retry-After: give outcomes room on a busy machine.
const OUTCOME = { timeout: 15_000 };

const payButton = (page: Page) => page.getByRole("button", { name: /^Pay / });
const progress = (page: Page) => page.getByRole("status").filter({ hasText: /your payment/ });

async function chooseMethod(page: Page, label: RegExp) {
  await page.getByRole("radio", { name: label }).check();
}

/** The one successful payment, as the receipt shows it and as the database and provider hold it. */
async function expectPaidOnce(page: Page, trail: MoneyTrail) {
  expect(trail.payments.filter((p) => p.status === "succeeded")).toHaveLength(1);
  expect(trail.ledgerTransactions).toBe(1);
  expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
  const paid = trail.payments.find((p) => p.status === "succeeded");
  await expect(page.getByTestId("payment-id")).toHaveText(paid?.id ?? "no succeeded payment");
  await expect(page.getByTestId("payment-status")).toHaveText("succeeded");
  expect(trail.charges.find((c) => c.status === "succeeded")?.metadata.payment_id).toBe(paid?.id);
  return paid;
}

test("a shopper goes from the catalogue to a receipt; a double-click on Pay charges once", async ({
  page,
  shop,
}) => {
  const payments = watchPayments(page);
  await page.goto("/");
  const products = page.getByRole("list", { name: "Products" }).getByRole("listitem");
  await products
    .nth(0)
    .getByRole("button", { name: /^Add to cart/ })
    .click();
  await products
    .nth(0)
    .getByRole("button", { name: /^Add to cart/ })
    .click();
  await products
    .nth(1)
    .getByRole("button", { name: /^Add to cart/ })
    .click();
  await expect(page.getByRole("link", { name: /^Cart/ })).toHaveText(/3/);

  await page.getByRole("link", { name: /^Cart/ }).click();
  await expect(page.getByRole("heading", { name: "Your cart" })).toBeVisible();
  const subtotal = await page.getByTestId("cart-subtotal").textContent();
  await page.getByRole("button", { name: "Proceed to checkout" }).click();
  await page.waitForURL(/\/checkout\?order=/);
  const orderId = new URL(page.url()).searchParams.get("order") ?? "";

  await expect(page.getByRole("row")).toHaveCount(4); // header, two items, total
  await expect(page.getByTestId("order-total")).toHaveText(subtotal ?? "");
  await expect(page.getByRole("radio")).toHaveCount(4); // Visa, declined, slow, 3-D Secure
  await payButton(page).dblclick();

  await expect(page.getByRole("heading", { name: "Payment complete" })).toBeVisible(OUTCOME);
  await expect(page.getByTestId("payment-amount")).toHaveText(subtotal ?? "");
  await payments.settled();
  const paid = await expectPaidOnce(page, await shop.trail(orderId));
  // The key was born in the browser, travelled as the header only, and created this payment.
  const [key] = payments.keys();
  expect(key).toMatch(UUID);
  expect(new Set(payments.keys())).toEqual(new Set([key]));
  // The checkout's own page is where a 3-D Secure step returns the shopper.
  expect(payments.exchanges[0]?.input).toEqual({
    orderId,
    paymentMethod: "pm_card_visa",
    returnUrl: new URL(`/checkout?order=${orderId}`, page.url()).toString(),
  });
  // The receipt comes through the outbox, the relay and the receipts service, then shows up here.
  await expect(page.getByTestId("receipt-number")).toHaveText(/^R-\d{4}-\d{6}$/, { timeout: 20_000 });
  await expect(page.getByTestId("receipt").getByRole("row")).toHaveCount(4); // header, two lines, total
  expect(paid?.key).toBe(key);
});

test("a yen product is priced and charged in whole yen; a cart of two currencies cannot check out", async ({
  page,
  shop,
}) => {
  await page.goto("/");
  const products = page.getByRole("list", { name: "Products" }).getByRole("listitem");
  const towel = products.filter({ hasText: "TOWEL-IMABARI" });
  await expect(towel).toContainText("JP¥1,800");
  await towel.getByRole("button", { name: /^Add to cart/ }).click();
  await products
    .nth(0)
    .getByRole("button", { name: /^Add to cart/ })
    .click();
  await expect(page.getByRole("link", { name: /^Cart/ })).toHaveText(/2/);

  await page.getByRole("link", { name: /^Cart/ }).click();
  await expect(page.getByTestId("cart-subtotal")).toHaveText(
    /^JP¥1,800 \+ €\d+\.\d\d$|^€\d+\.\d\d \+ JP¥1,800$/,
  );
  await expect(page.getByTestId("cart-mixed-currencies")).toContainText("one currency");
  await expect(page.getByRole("button", { name: "Proceed to checkout" })).toBeDisabled();
  const euroItem = page
    .getByRole("row")
    .filter({ hasNotText: "Imabari" })
    .getByRole("button", { name: /^Remove/ });
  await euroItem.click();
  await expect(page.getByTestId("cart-subtotal")).toHaveText("JP¥1,800");
  await expect(page.getByTestId("cart-mixed-currencies")).toHaveCount(0);

  await page.getByRole("button", { name: "Proceed to checkout" }).click();
  await page.waitForURL(/\/checkout\?order=/);
  const orderId = new URL(page.url()).searchParams.get("order") ?? "";
  await expect(page.getByTestId("order-total")).toHaveText("JP¥1,800");
  await payButton(page).click();
  await expect(page.getByRole("heading", { name: "Payment complete" })).toBeVisible(OUTCOME);
  await expect(page.getByTestId("payment-amount")).toHaveText("JP¥1,800");
  const trail = await shop.trail(orderId);
  await expectPaidOnce(page, trail);
  // ¥1,800 is charged as 1800: a zero-decimal currency's amount is whole yen at the provider too.
  expect(trail.charges.find((c) => c.status === "succeeded")).toMatchObject({
    amount: 1800,
    currency: expect.stringMatching(/^jpy$/i),
  });
});

test("five presses within 200 ms, the disabled state stripped by script, share one key and one charge", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  await page.goto(`/checkout?order=${order.id}`);
  await chooseMethod(page, /^Slow Visa/);
  await expect(payButton(page)).toBeEnabled();

  const submits = await payButton(page).evaluate(async (element) => {
    const button = element as HTMLButtonElement;
    // Undo the disabled state as soon as React sets it, so every click really submits.
    new MutationObserver(() => button.removeAttribute("disabled")).observe(button, { attributes: true });
    let count = 0;
    button.form?.addEventListener("submit", () => count++);
    for (let i = 0; i < 5; i++) {
      button.click();
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    return count;
  });

  await expect(page.getByTestId("payment-id")).toBeVisible(OUTCOME);
  await payments.settled();
  expect(new Set(payments.keys()).size).toBe(1);
  expect(payments.exchanges).toHaveLength(1);
  expect(submits).toBe(5);
  await expectPaidOnce(page, await shop.trail(order.id));
});

test("a lost response is retried with the same key and shows the replayed payment", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  let firstAnswer: { id?: string } | undefined;
  await page.route("**/api/trpc/payments.create", async (route) => {
    if (!firstAnswer) {
      // The server charges and answers; the browser never hears it.
      const response = await route.fetch();
      firstAnswer = (await response.json()).result?.data ?? {};
      await route.abort("connectionreset");
      return;
    }
    // Hold the retry a moment so the shopper can be seen being told what is happening.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await route.continue();
  });
  await page.goto(`/checkout?order=${order.id}`);
  await payButton(page).click();

  await expect(progress(page)).toContainText("Confirming your payment…");
  await expect(page.getByTestId("payment-id")).toHaveText(firstAnswer?.id ?? "no first answer", OUTCOME);
  await payments.settled();
  const [lost, replay] = payments.exchanges;
  expect(lost?.failure).toBeTruthy();
  expect(replay).toMatchObject({ key: lost?.key, status: 200, replayed: true });
  expect(payments.exchanges).toHaveLength(2);
  await expectPaidOnce(page, await shop.trail(order.id));
});

test("a duplicate in flight gets 409; the client waits Retry-After and ends on the replayed result", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  let forced: Promise<{ status: number; id?: string }> | undefined;
  await page.route("**/api/trpc/payments.create", async (route) => {
    if (!forced) {
      // Send the same request with the same key first: the browser's becomes the duplicate.
      const request = route.request();
      forced = page.request
        .post(request.url(), { headers: await request.allHeaders(), data: request.postDataJSON() })
        .then(async (res) => ({ status: res.status(), id: (await res.json()).result?.data?.id }));
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await route.continue();
  });
  await page.goto(`/checkout?order=${order.id}`);
  await chooseMethod(page, /^Slow Visa/);
  await payButton(page).click();

  await expect(page.getByTestId("payment-id")).toBeVisible(OUTCOME);
  const original = await forced;
  expect(original?.status).toBe(200);
  await expect(page.getByTestId("payment-id")).toHaveText(original?.id ?? "no forced answer");
  await payments.settled();

  const [duplicate, ...retries] = payments.exchanges;
  expect(duplicate).toMatchObject({ status: 409, retryAfter: "1" });
  const next = retries[0];
  expect((next?.sentAt ?? 0) - (duplicate?.answeredAt ?? 0)).toBeGreaterThanOrEqual(900);
  expect(retries.at(-1)).toMatchObject({ status: 200, replayed: true });
  expect(new Set(payments.keys()).size).toBe(1);
  await expectPaidOnce(page, await shop.trail(order.id));
});

test("a reload while the payment is in flight resumes it with the same key; one charge", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  await page.goto(`/checkout?order=${order.id}`);
  await chooseMethod(page, /^Slow Visa/);
  const sent = page.waitForRequest(isPaymentRequest);
  await payButton(page).click();
  await sent;
  await page.reload();

  await expect(progress(page)).toContainText("Confirming your payment…");
  await expect(page.getByTestId("payment-id")).toBeVisible(OUTCOME);
  await payments.settled();
  expect(payments.exchanges.length).toBeGreaterThanOrEqual(2);
  expect(new Set(payments.keys()).size).toBe(1);
  const paid = await expectPaidOnce(page, await shop.trail(order.id));
  expect(paid?.key).toBe(payments.keys()[0]);
});

test("two tabs paying the same order: one charge, and the second tab says it is already paid", async ({
  context,
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const second = await context.newPage();
  const firstPayments = watchPayments(page);
  const secondPayments = watchPayments(second);
  await page.goto(`/checkout?order=${order.id}`);
  await second.goto(`/checkout?order=${order.id}`);

  await chooseMethod(page, /^Slow Visa/);
  const sent = page.waitForRequest(isPaymentRequest);
  await payButton(page).click();
  await sent;
  // The request leaving the browser is not its payment existing: on a busy machine the second
  // tab's press could reach the server first and win the order. Press once the server holds it.
  await expect.poll(async () => (await shop.trail(order.id)).payments.length, OUTCOME).toBe(1);
  await payButton(second).click();

  await expect(second.getByRole("alert").filter({ hasText: "This order is already paid" })).toBeVisible(
    OUTCOME,
  );
  await expect(page.getByTestId("payment-id")).toBeVisible(OUTCOME);
  await firstPayments.settled();
  await secondPayments.settled();
  const paid = await expectPaidOnce(page, await shop.trail(order.id));
  await expect(second.getByTestId("existing-payment-id")).toHaveText(paid?.id ?? "");
  // Each tab's press was its own intent; the server, not a shared key, kept it to one charge.
  expect(secondPayments.keys()[0]).not.toBe(firstPayments.keys()[0]);
});

test("a declined card gets a clear message; paying again with Visa uses a new key and charges once", async ({
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  await page.goto(`/checkout?order=${order.id}`);
  await chooseMethod(page, /^Declined/);
  await payButton(page).click();

  const problem = page.getByRole("alert").filter({ hasText: "declined" });
  await expect(problem).toContainText("Your card was declined.");
  await expect(problem).toContainText("Nothing was charged");
  await expect(problem).toBeFocused();

  // Keyboard only: from the chosen card, arrow up to Visa, tab to Pay, press Enter.
  await page.getByRole("radio", { name: /^Declined/ }).focus();
  await page.keyboard.press("ArrowUp");
  await expect(page.getByRole("radio", { name: /^Visa/ })).toBeChecked();
  await page.keyboard.press("Tab");
  await expect(payButton(page)).toBeFocused();
  await page.keyboard.press("Enter");

  await expect(page.getByTestId("payment-id")).toBeVisible(OUTCOME);
  await payments.settled();
  const [declinedKey, visaKey] = payments.keys();
  expect(payments.exchanges.map((e) => e.status)).toEqual([402, 200]);
  expect(visaKey).not.toBe(declinedKey);
  const trail = await shop.trail(order.id);
  expect(trail.payments.map((p) => [p.status, p.key])).toEqual([
    ["declined", declinedKey],
    ["succeeded", visaKey],
  ]);
  expect(trail.charges.map((c) => c.status).sort()).toEqual(["declined", "succeeded"]);
  await expectPaidOnce(page, trail);
});

test("offline for a few seconds while paying, then back online: one charge", async ({
  context,
  page,
  shop,
}) => {
  const order = await shop.newOrder();
  const payments = watchPayments(page);
  let dropped = false;
  await page.route("**/api/trpc/payments.create", async (route) => {
    if (dropped) return route.continue();
    dropped = true;
    // Chromium's offline mode spares requests already sent, so drop this one by hand once the
    // server has charged: the network went away while the shopper waited for the answer.
    await route.fetch();
    await route.abort("internetdisconnected");
  });
  await page.goto(`/checkout?order=${order.id}`);
  await chooseMethod(page, /^Slow Visa/);
  const sent = page.waitForRequest(isPaymentRequest);
  await payButton(page).click();
  await sent;
  await context.setOffline(true);

  await expect(progress(page)).toContainText("Confirming your payment…");
  await page.waitForTimeout(3_000);
  await expect(page.getByTestId("payment-id")).toHaveCount(0);
  await context.setOffline(false);

  await expect(page.getByTestId("payment-id")).toBeVisible(OUTCOME);
  await payments.settled();
  // The dropped request, then at least one attempt that found the browser offline.
  const failures = payments.exchanges.filter((e) => e.failure);
  expect(failures.length).toBeGreaterThanOrEqual(2);
  expect(payments.exchanges.at(-1)).toMatchObject({ status: 200, replayed: true });
  expect(new Set(payments.keys()).size).toBe(1);
  await expectPaidOnce(page, await shop.trail(order.id));
});
