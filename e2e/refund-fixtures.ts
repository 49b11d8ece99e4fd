import { randomUUID } from "node:crypto";
import type { APIRequestContext, BrowserContext, Page, Request } from "@playwright/test";
import pg from "pg";
import { payTrpc } from "./api";
import { apiTest, expect, providerAt } from "./fixtures";

/**
 * Fixtures for the refund specs: a browser signed in as the operator, a paid order of the demo
 * customer per test, and what was refunded for a payment read straight from the database and the
 * provider (never through the app under test).
 */

// The server's ADMIN_TOKEN: its default outside production unless the run sets one.
export const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "admin_test";

export interface PaidOrder {
  orderId: string;
  paymentId: string;
  chargeId: string;
  amountMinor: number;
  currency: string;
}

/** Every refund of one payment, in our books and at the provider. */
export interface RefundTrail {
  refunds: { id: string; amountMinor: number; status: string; key: string | null }[];
  /** Ledger transactions booked for the payment's refunds. */
  reversals: number;
  providerRefunds: { id: string; amount: number; metadata: Record<string, string> }[];
}

export function isRefundRequest(request: Request): boolean {
  return new URL(request.url()).pathname === "/api/trpc/admin.refunds.create";
}

/** A new order of the demo customer, paid with Visa through the API. */
export async function paidOrder(request: APIRequestContext, quantity = 2): Promise<PaidOrder> {
  const order = await request.post("/api/trpc/orders.create", {
    headers: { authorization: "Bearer sk_test_alice" },
    data: { items: [{ sku: "TEE-CLASSIC", quantity }] },
  });
  expect(order.status(), await order.text()).toBe(200);
  const orderId = (await order.json()).result.data.id as string;
  const paid = await payTrpc(request, orderId, randomUUID());
  expect(paid.status(), await paid.text()).toBe(200);
  const payment = (await paid.json()).result.data;
  expect(payment.status).toBe("succeeded");
  return {
    orderId,
    paymentId: payment.id,
    chargeId: payment.providerChargeId,
    amountMinor: payment.amount,
    currency: payment.currency,
  };
}

class RefundTrailReader {
  constructor(
    private readonly pool: pg.Pool,
    private readonly providerUrl: string,
  ) {}

  async of(payment: PaidOrder): Promise<RefundTrail> {
    const refunds = await this.pool.query<{
      id: string;
      amountMinor: number;
      status: string;
      key: string | null;
    }>(
      `SELECT r.id, r.amount_minor AS "amountMinor", r.status, k.key FROM refunds r
         LEFT JOIN idempotency_keys k ON k.id = r.idempotency_key_id
        WHERE r.payment_id = $1 ORDER BY r.created_at`,
      [payment.paymentId],
    );
    const reversals = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_transactions t JOIN refunds r ON r.id = t.refund_id
        WHERE r.payment_id = $1`,
      [payment.paymentId],
    );
    const providerRefunds: RefundTrail["providerRefunds"] = [];
    for await (const refund of providerAt(this.providerUrl).listRefunds({ charge: payment.chargeId }))
      providerRefunds.push(refund);
    return { refunds: refunds.rows, reversals: reversals.rows[0]?.n ?? 0, providerRefunds };
  }
}

type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>;

async function signInAsAdmin(page: Page) {
  await page.goto("/admin/signin");
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
}

/** The shop over the API, and what was refunded for a payment: no browser needed. */
export const refundApiTest = apiTest.extend<
  { refundTrail: (payment: PaidOrder) => Promise<RefundTrail> },
  { refundTrails: RefundTrailReader }
>({
  refundTrails: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
    async ({}, use) => {
      const url = process.env.DATABASE_URL;
      const providerUrl = process.env.PAYMENT_PROVIDER_URL;
      if (!url || !providerUrl)
        throw new Error(
          "The refund specs need DATABASE_URL and PAYMENT_PROVIDER_URL (`npm test` sets both).",
        );
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      await use(new RefundTrailReader(pool, providerUrl.replace(/\/$/, "")));
      await pool.end();
    },
    { scope: "worker" },
  ],
  refundTrail: async ({ refundTrails }, use) => {
    await use((payment) => refundTrails.of(payment));
  },
});

/** The same, with a browser signed in as the operator. */
export const adminTest = refundApiTest.extend<object, { adminState: StorageState }>({
  adminState: [
    async ({ browser }, use, workerInfo) => {
      const context = await browser.newContext({ baseURL: workerInfo.project.use.baseURL });
      await signInAsAdmin(await context.newPage());
      const state = await context.storageState();
      await context.close();
      await use(state);
    },
    { scope: "worker" },
  ],
  storageState: async ({ adminState }, use) => {
    await use(adminState);
  },
});

export { expect };
