import { randomUUID } from "node:crypto";
import type { Locator, Page } from "@playwright/test";
import { watchMutations } from "./fixtures";
import {
  ADMIN_TOKEN,
  expect,
  isRefundRequest,
  type PaidOrder,
  paidOrder,
  type RefundTrail,
  refundApiTest,
  adminTest as test,
} from "./refund-fixtures";

/**
 * The operator's Refund on the admin order page, against the production build, its database and
 * the provider: whatever the network or the operator does, one press is at most one refund, and
 * refunds of one payment never exceed its capture. Then the REST contract of POST /api/v1/refunds.
 */

const OUTCOME = { timeout: 20_000 };
// Holds the provider's refund this long after it committed: a window for a reload or a second tab.
const SLOW_REFUND = "latency=2500";

// These payments are in euros (two decimals). The expected text is worked out here, not by the
// app's own formatter (app/money.ts), so that a wrong display can fail these tests.
const money = (minor: number) =>
  new Intl.NumberFormat("en-IE", { style: "currency", currency: "EUR" }).format(minor / 100);

function refundForm(page: Page, paymentId: string) {
  return page.getByRole("form", { name: `Refund payment ${paymentId}` });
}

async function fillRefund(page: Page, payment: PaidOrder, amountMinor: number, reason: string) {
  const form = refundForm(page, payment.paymentId);
  await form.getByLabel(/^Amount to refund/).fill((amountMinor / 100).toFixed(2));
  await form.getByLabel("Reason").fill(reason);
  return form;
}

/** Refund, then the confirmation's second press: only that press sends the refund. */
async function refundAndConfirm(form: Locator) {
  await form.getByRole("button", { name: "Refund" }).click();
  await form
    .getByRole("group", { name: "Confirm the refund" })
    .getByRole("button", { name: "Confirm" })
    .click();
}

/** One refund of `amountMinor`: one row, one reversal, one provider refund, for one key. */
function expectRefundedOnce(trail: RefundTrail, amountMinor: number) {
  expect(trail.refunds).toHaveLength(1);
  expect(trail.refunds[0]).toMatchObject({ amountMinor, status: "succeeded" });
  expect(trail.reversals).toBe(1);
  expect(trail.providerRefunds.map((r) => r.amount)).toEqual([amountMinor]);
  expect(trail.providerRefunds[0]?.metadata.refund_id).toBe(trail.refunds[0]?.id);
  return trail.refunds[0];
}

test("a double click on Confirm (and three more presses with the button re-enabled) refunds once", async ({
  page,
  request,
  refundTrail,
}) => {
  const payment = await paidOrder(request);
  const refunds = watchMutations(page, isRefundRequest);
  // The request held a moment, so that every press lands while it is in flight.
  await page.route("**/api/trpc/admin.refunds.create", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await route.continue();
  });
  await page.goto(`/admin/orders/${payment.orderId}`);
  const form = await fillRefund(page, payment, 500, "damaged in transit");
  await form.getByRole("button", { name: "Refund" }).click();
  const confirmation = form.getByRole("group", { name: "Confirm the refund" });
  await expect(confirmation).toContainText(
    `Refund ${money(500)} (EUR) for “damaged in transit”? ${money(payment.amountMinor - 500)} stays refundable after it.`,
  );
  await confirmation.getByRole("button", { name: "Confirm" }).dblclick();
  await confirmation.evaluate((group) => {
    const b = group.querySelector("button") as HTMLButtonElement;
    for (let i = 0; i < 3; i++) {
      b.disabled = false;
      b.click();
    }
  });

  await expect(form.getByTestId("refund-result")).toContainText(`Refunded ${money(500)}`, OUTCOME);
  await refunds.settled();
  expect(refunds.exchanges).toHaveLength(1);
  const refund = expectRefundedOnce(await refundTrail(payment), 500);
  expect(refund?.key).toBe(refunds.keys()[0]);
  await expect(form.getByTestId("refund-id")).toHaveText(refund?.id ?? "");
  // The page's figures follow: the refund listed, what is left the default of the next one.
  await expect(page.getByTestId("refund-row")).toHaveCount(1);
  await expect(page.getByTestId("refundable-amount")).toHaveText(money(payment.amountMinor - 500));
  // The next refund needs its own reason.
  await expect(form.getByLabel("Reason")).toHaveValue("");
  await expect(form.getByLabel(/^Amount to refund/)).toHaveValue(
    ((payment.amountMinor - 500) / 100).toFixed(2),
  );

  // The refund's key in the admin's key list, by its procedure, and its page naming the refund.
  const key = refunds.keys()[0] ?? "";
  await page.goto(`/admin/keys?q=${key}`);
  const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: key }) });
  await expect(row.getByText("refunds.create")).toBeVisible();
  await expect(row.getByText("completed", { exact: true })).toBeVisible();
  await row.getByRole("link", { name: key }).click();
  await expect(page.getByRole("heading", { name: "Refund", exact: true })).toBeVisible();
  await expect(page.getByText(refund?.id ?? "no refund", { exact: true })).toBeVisible();

  // The overview charts refunds apart from payments: its own strip of outcomes, the claim counted.
  await page.goto("/admin");
  const chart = page.getByRole("figure", { name: /^Outcomes of refunds\.create per minute/ });
  await expect(chart.getByRole("img", { name: /^Claimed: [1-9]\d* in the last hour/ })).toBeVisible();
});

test("Refund asks first: the confirmation names the amount, currency and what stays; Cancel sends nothing; more than is left is never asked", async ({
  page,
  request,
  refundTrail,
}) => {
  const payment = await paidOrder(request);
  const refunds = watchMutations(page, isRefundRequest);
  await page.goto(`/admin/orders/${payment.orderId}`);
  const form = await fillRefund(page, payment, payment.amountMinor + 1, "too much");
  await form.getByRole("button", { name: "Refund" }).click();
  await expect(form.getByRole("alert")).toHaveText(
    `At most ${money(payment.amountMinor)} is left to refund on this payment.`,
  );
  await expect(form.getByRole("group", { name: "Confirm the refund" })).toHaveCount(0);

  await fillRefund(page, payment, 150, "changed mind");
  await form.getByRole("button", { name: "Refund" }).click();
  const confirmation = form.getByRole("group", { name: "Confirm the refund" });
  await expect(confirmation).toContainText(`Refund ${money(150)} (EUR)`);
  await expect(confirmation).toContainText(`${money(payment.amountMinor - 150)} stays refundable after it.`);
  // The refusal it replaced is gone: one outcome at a time.
  await expect(form.getByRole("alert")).toHaveCount(0);
  await expect(confirmation.getByRole("button", { name: "Confirm" })).toBeFocused();
  await confirmation.getByRole("button", { name: "Cancel" }).click();
  await expect(confirmation).toHaveCount(0);
  await expect(form.getByLabel(/^Amount to refund/)).toBeEnabled();
  await refunds.settled();
  expect(refunds.exchanges).toHaveLength(0);
  expect((await refundTrail(payment)).refunds).toHaveLength(0);
});

test("the shopper's order page lists the refund, and its refund receipt once issued", async ({
  browser,
  request,
}, testInfo) => {
  const payment = await paidOrder(request);
  const refund = await request.post("/api/v1/refunds", {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "idempotency-key": randomUUID() },
    data: { paymentId: payment.paymentId, amountMinor: 600, reason: "wrong size" },
  });
  expect(refund.status(), await refund.text()).toBe(200);
  // The shopper's own browser, not the operator's.
  const shopper = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
  const page = await shopper.newPage();
  await page.goto("/signin");
  await page.getByRole("button", { name: "Alice Martin" }).click();
  await expect(page.getByText(/^Signed in as /)).toBeVisible();
  await expect(async () => {
    await page.goto(`/checkout?order=${payment.orderId}`);
    await expect(page.getByTestId("shopper-refund")).toContainText("receipt", { timeout: 2_000 });
  }).toPass(OUTCOME);
  await expect(page.getByTestId("shopper-refund")).toHaveCount(1);
  await expect(page.getByTestId("shopper-refund")).toContainText("wrong size");
  await expect(page.getByTestId("shopper-refund")).toContainText(money(600));
  await expect(page.getByTestId("refunded-total")).toHaveText(money(600));
  await shopper.close();
});

test("a lost response is retried with the same key and shows the refund made the first time", async ({
  page,
  request,
  refundTrail,
}) => {
  const payment = await paidOrder(request);
  const refunds = watchMutations(page, isRefundRequest);
  let firstAnswer: { id?: string } | undefined;
  await page.route("**/api/trpc/admin.refunds.create", async (route) => {
    if (!firstAnswer) {
      // The server refunds and answers; the browser never hears it.
      const response = await route.fetch();
      firstAnswer = (await response.json()).result?.data ?? {};
      await route.abort("connectionreset");
      return;
    }
    await route.continue();
  });
  await page.goto(`/admin/orders/${payment.orderId}`);
  const form = await fillRefund(page, payment, 700, "lost answer");
  await refundAndConfirm(form);

  await expect.poll(() => firstAnswer?.id, OUTCOME).toBeTruthy();
  await expect(form.getByTestId("refund-id")).toHaveText(firstAnswer?.id ?? "", OUTCOME);
  await refunds.settled();
  const [lost, replay] = refunds.exchanges;
  expect(lost?.failure).toBeTruthy();
  expect(replay).toMatchObject({ key: lost?.key, status: 200, replayed: true });
  expectRefundedOnce(await refundTrail(payment), 700);
});

test("a reload while the refund is in flight resumes it with the same key; one refund", async ({
  page,
  request,
  refundTrail,
}) => {
  const payment = await paidOrder(request);
  const refunds = watchMutations(page, isRefundRequest);
  let slowed = false;
  await page.route("**/api/trpc/admin.refunds.create", async (route) => {
    // Only the first request is slowed at the provider; the resumed one meets it in flight.
    const headers = { ...route.request().headers(), ...(slowed ? {} : { "x-provider-fault": SLOW_REFUND }) };
    slowed = true;
    await route.continue({ headers });
  });
  await page.goto(`/admin/orders/${payment.orderId}`);
  const form = await fillRefund(page, payment, 300, "reload");
  const sent = page.waitForRequest(isRefundRequest);
  await refundAndConfirm(form);
  await sent;
  await page.reload();

  await expect(refundForm(page, payment.paymentId).getByTestId("refund-result")).toContainText(
    `Refunded ${money(300)}`,
    OUTCOME,
  );
  await refunds.settled();
  expect(refunds.exchanges.length).toBeGreaterThanOrEqual(2);
  expect(new Set(refunds.keys()).size).toBe(1);
  const refund = expectRefundedOnce(await refundTrail(payment), 300);
  expect(refund?.key).toBe(refunds.keys()[0]);
});

test("offline while refunding, then back online: one refund", async ({
  page,
  context,
  request,
  refundTrail,
}) => {
  const payment = await paidOrder(request);
  const refunds = watchMutations(page, isRefundRequest);
  await page.goto(`/admin/orders/${payment.orderId}`);
  const form = await fillRefund(page, payment, 250, "offline");
  await context.setOffline(true);
  await refundAndConfirm(form);
  await expect(form.getByTestId("refund-progress")).toContainText("retrying with the same key", OUTCOME);
  await context.setOffline(false);
  await expect(form.getByTestId("refund-result")).toContainText(`Refunded ${money(250)}`, OUTCOME);
  await refunds.settled();
  expect(new Set(refunds.keys()).size).toBe(1);
  expectRefundedOnce(await refundTrail(payment), 250);
});

test("two tabs refund the same payment with amounts summing past the capture: what fits is refunded, the rest refused saying what is left", async ({
  context,
  page,
  request,
  refundTrail,
}) => {
  const payment = await paidOrder(request);
  const first = Math.round(payment.amountMinor * 0.6);
  const second = payment.amountMinor - first + 100;
  const other = await context.newPage();
  const firstRefunds = watchMutations(page, isRefundRequest);
  const secondRefunds = watchMutations(other, isRefundRequest);
  await page.route("**/api/trpc/admin.refunds.create", (route) =>
    route.continue({ headers: { ...route.request().headers(), "x-provider-fault": SLOW_REFUND } }),
  );
  await page.goto(`/admin/orders/${payment.orderId}`);
  await other.goto(`/admin/orders/${payment.orderId}`);

  const firstForm = await fillRefund(page, payment, first, "first tab");
  const secondForm = await fillRefund(other, payment, second, "second tab");
  const sent = page.waitForRequest(isRefundRequest);
  await refundAndConfirm(firstForm);
  await sent;
  // The first tab's refund exists (pending at the provider) before the second tab presses.
  await expect.poll(async () => (await refundTrail(payment)).refunds.length, OUTCOME).toBe(1);
  await refundAndConfirm(secondForm);

  await expect(firstForm.getByTestId("refund-result")).toContainText(`Refunded ${money(first)}`, OUTCOME);
  const refused = secondForm.getByTestId("refund-refused");
  await expect(refused).toBeVisible(OUTCOME);
  await expect(refused).toContainText("Refund refused");
  await expect(refused).toContainText(
    `Only ${money(payment.amountMinor - first)} is left to refund on this payment.`,
  );
  await firstRefunds.settled();
  await secondRefunds.settled();
  // Each tab's press was its own key; the database, not a key, kept the sum within the capture.
  expect(secondRefunds.keys()[0]).not.toBe(firstRefunds.keys()[0]);
  expectRefundedOnce(await refundTrail(payment), first);
});

refundApiTest.describe("POST /api/v1/refunds", () => {
  const asAdmin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  refundApiTest(
    "200 with the refund, an exact replay, 422 problem+json beyond the capture, never a 5xx",
    async ({ request, refundTrail }) => {
      const payment = await paidOrder(request);
      const key = randomUUID();
      const body = { paymentId: payment.paymentId, amountMinor: 400, reason: "REST" };
      const post = (k: string, data: unknown) =>
        request.post("/api/v1/refunds", { headers: { ...asAdmin, "idempotency-key": k }, data });

      const first = await post(key, body);
      expect(first.status(), await first.text()).toBe(200);
      const refund = await first.json();
      expect(refund).toMatchObject({ paymentId: payment.paymentId, amountMinor: 400, status: "succeeded" });
      expect(typeof refund.id).toBe("string");
      expect(first.headers()["idempotent-replayed"]).toBeUndefined();

      const again = await post(key, body);
      expect(again.status()).toBe(200);
      expect(again.headers()["idempotent-replayed"]).toBe("true");
      expect(await again.text()).toBe(await first.text());

      const beyond = await post(randomUUID(), { ...body, amountMinor: payment.amountMinor });
      expect(beyond.status()).toBe(422);
      expect(beyond.headers()["content-type"]).toContain("application/problem+json");
      const problem = await beyond.json();
      expect(problem.type).toMatch(/problems[/#]refund-exceeds-captured$/);
      expect(problem.status).toBe(422);

      const unauthenticated = await request.post("/api/v1/refunds", {
        headers: { authorization: "Bearer sk_test_alice", "idempotency-key": randomUUID() },
        data: body,
      });
      expect(unauthenticated.status()).toBe(401);
      const noKey = await request.post("/api/v1/refunds", { headers: asAdmin, data: body });
      expect(noKey.status()).toBe(400);

      expectRefundedOnce(await refundTrail(payment), 400);
    },
  );

  refundApiTest(
    "20 concurrent refunds with different keys: what fits succeeds, the rest are 4xx, none 5xx",
    async ({ request, refundTrail }) => {
      const payment = await paidOrder(request);
      const each = Math.floor(payment.amountMinor / 4) + 1;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          request.post("/api/v1/refunds", {
            headers: { ...asAdmin, "idempotency-key": randomUUID() },
            data: { paymentId: payment.paymentId, amountMinor: each, reason: "race" },
            timeout: 30_000,
          }),
        ),
      );
      const statuses = answers.map((a) => a.status());
      const failures = await Promise.all(answers.filter((a) => a.status() >= 500).map((a) => a.text()));
      expect(failures, "no 5xx").toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      for (const a of answers.filter((x) => x.status() !== 200)) {
        expect(a.status()).toBe(422);
        expect((await a.json()).type).toMatch(/refund-exceeds-captured$/);
      }
      const trail = await refundTrail(payment);
      expect(trail.refunds.filter((r) => r.status === "succeeded")).toHaveLength(3);
      expect(trail.providerRefunds.reduce((n, r) => n + r.amount, 0)).toBe(3 * each);
      expect(trail.reversals).toBe(3);
    },
  );
});
