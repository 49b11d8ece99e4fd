import { type BrowserContext, test as base, expect, type Page, type Request } from "@playwright/test";
import pg from "pg";
import { TEST_PROVIDER_KEY } from "../provider/auth";
import type { Charge } from "../server/provider";
import { stripeProvider } from "../server/provider/stripe";

/**
 * Fixtures for the checkout specs: a signed-in shopper, an order of their own per test, a
 * recorder of the browser's payments.create requests, and the money trail of an order read
 * straight from the database and from the payment provider, with the Stripe SDK in this process
 * (never through the app under test).
 */

const CUSTOMER = { name: "Alice Martin", apiToken: "sk_test_alice" };

function requiredEnv(name: "DATABASE_URL" | "PAYMENT_PROVIDER_URL"): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set. The checkout specs count payments, ledger transactions and provider charges ` +
        "themselves, so they need the app's database (DATABASE_URL) and its payment provider " +
        "(PAYMENT_PROVIDER_URL). `npm test` sets both; by hand, start a provider " +
        "(`PROVIDER_PORT=4511 DATABASE_URL=… npx tsx provider/main.ts`) and pass both variables to Playwright.",
    );
  }
  return value;
}

/** A payment at the provider, as the app's binding reads it (status succeeded, declined, …). */
export type ProviderCharge = Charge;

/** Everything that moved money for one order. */
export interface MoneyTrail {
  payments: { id: string; status: string; key: string | null }[];
  ledgerTransactions: number;
  charges: ProviderCharge[];
}

class MoneyTrailReader {
  constructor(
    private readonly pool: pg.Pool,
    private readonly providerUrl: string,
  ) {}

  async of(orderId: string, since: Date): Promise<MoneyTrail> {
    const payments = await this.pool.query<{ id: string; status: string; key: string | null }>(
      `SELECT p.id, p.status, k.key FROM payments p
         LEFT JOIN idempotency_keys k ON k.id = p.idempotency_key_id
        WHERE p.order_id = $1 ORDER BY p.created_at`,
      [orderId],
    );
    const ledger = await this.pool.query<{ count: string }>(
      `SELECT count(*) FROM ledger_transactions t JOIN payments p ON p.id = t.payment_id WHERE p.order_id = $1`,
      [orderId],
    );
    return {
      payments: payments.rows,
      ledgerTransactions: Number(ledger.rows[0]?.count),
      charges: (await this.chargesSince(since)).filter((c) => c.metadata.order_id === orderId),
    };
  }

  private async chargesSince(since: Date): Promise<ProviderCharge[]> {
    const provider = providerAt(this.providerUrl);
    const charges: ProviderCharge[] = [];
    for await (const charge of provider.listCharges({ createdGte: since })) charges.push(charge);
    return charges;
  }
}

/** The payment provider of the suite, read with the app's Stripe adapter and the suite's key. */
export function providerAt(baseUrl: string) {
  return stripeProvider({ baseUrl, secretKey: process.env.PAYMENT_PROVIDER_SECRET || TEST_PROVIDER_KEY });
}

/** One payments.create request the browser made, and what became of it. */
export interface PaymentExchange {
  key: string | null;
  input: unknown;
  sentAt: number;
  answeredAt?: number;
  status?: number;
  replayed?: boolean;
  retryAfter?: string | null;
  failure?: string;
}

export function isPaymentRequest(request: Request): boolean {
  return new URL(request.url()).pathname === "/api/trpc/payments.create";
}

/** Records every payments.create request of a page (across reloads). */
export function watchPayments(page: Page) {
  return watchMutations(page, isPaymentRequest);
}

/** Records every request of a page (across reloads) that `matches`: key, input, answer or failure. */
export function watchMutations(page: Page, matches: (request: Request) => boolean) {
  const exchanges: PaymentExchange[] = [];
  const byRequest = new Map<Request, PaymentExchange>();
  page.on("request", (request) => {
    if (!matches(request)) return;
    const exchange: PaymentExchange = {
      key: request.headers()["idempotency-key"] ?? null,
      input: request.postDataJSON(),
      sentAt: Date.now(),
    };
    exchanges.push(exchange);
    byRequest.set(request, exchange);
  });
  page.on("response", (response) => {
    const exchange = byRequest.get(response.request());
    if (!exchange) return;
    const headers = response.headers();
    Object.assign(exchange, {
      answeredAt: Date.now(),
      status: response.status(),
      replayed: headers["idempotent-replayed"] === "true",
      retryAfter: headers["retry-after"] ?? null,
    });
  });
  page.on("requestfailed", (request) => {
    const exchange = byRequest.get(request);
    if (exchange) Object.assign(exchange, { answeredAt: Date.now(), failure: request.failure()?.errorText });
  });
  return {
    exchanges,
    keys: () => exchanges.map((e) => e.key),
    /** Waits until no request is still open, so late duplicates are counted too. */
    async settled() {
      await expect.poll(() => exchanges.every((e) => e.answeredAt !== undefined)).toBe(true);
    },
  };
}

export interface Order {
  id: string;
  total: number;
  currency: string;
}

interface Shop {
  /** A new order of the signed-in customer (its own cart), made through the API. */
  newOrder(items?: { sku: string; quantity: number }[]): Promise<Order>;
  /** The money trail of an order, limited to provider charges made since this test began. */
  trail(orderId: string): Promise<MoneyTrail>;
}

type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>;

/**
 * The shop over the API alone (orders made with the customer's API key, money trails): no
 * browser is launched, so API-level specs run where no browser is installed.
 */
export const apiTest = base.extend<{ shop: Shop }, { trails: MoneyTrailReader }>({
  trails: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
    async ({}, use) => {
      const pool = new pg.Pool({ connectionString: requiredEnv("DATABASE_URL"), max: 2 });
      await use(new MoneyTrailReader(pool, requiredEnv("PAYMENT_PROVIDER_URL").replace(/\/$/, "")));
      await pool.end();
    },
    { scope: "worker" },
  ],
  shop: async ({ request, trails }, use) => {
    // The provider's clock is this machine's; a margin covers the rounding of created_at.
    const since = new Date(Date.now() - 5_000);
    const auth = { authorization: `Bearer ${CUSTOMER.apiToken}` };
    await use({
      async newOrder(items) {
        let lines = items;
        if (!lines) {
          const catalog = await request.get("/api/trpc/catalog.list");
          const products = (await catalog.json()).result.data as { sku: string }[];
          lines = [{ sku: products[0]?.sku ?? "missing", quantity: 2 }];
        }
        const res = await request.post("/api/trpc/orders.create", { headers: auth, data: { items: lines } });
        expect(res.status(), await res.text()).toBe(200);
        return (await res.json()).result.data as Order;
      },
      trail: (orderId) => trails.of(orderId, since),
    });
  },
});

/** The shop, and a browser signed in as the demo customer. */
export const test = apiTest.extend<object, { customerState: StorageState }>({
  customerState: [
    async ({ browser }, use, workerInfo) => {
      // Kept in memory, not in the output folder another Playwright run may be clearing.
      const context = await browser.newContext({ baseURL: workerInfo.project.use.baseURL });
      const page = await context.newPage();
      await page.goto("/signin");
      await page.getByRole("button", { name: CUSTOMER.name }).click();
      await expect(page.getByText(/^Signed in as /)).toBeVisible();
      const state = await context.storageState();
      await context.close();
      await use(state);
    },
    { scope: "worker" },
  ],
  storageState: async ({ customerState }, use) => {
    await use(customerState);
  },
});

export { expect };
