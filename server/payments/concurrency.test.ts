import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { amountProblem, CURRENCY_CODES } from "../../shared/currency";
import { db } from "../db";
import { ledgerBalances, verifyLedger } from "../ledger";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { newKey, pay } from "../test/payments";
import { it, type TestProvider } from "../test/vitest";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("concurrent");
});

/**
 * A currency Stripe lists that no test has used on this database (so this file's sums are its own
 * and its house accounts do not exist yet), in which every amount here is a valid charge.
 */
async function freshCurrency(amounts: number[]): Promise<string> {
  const fits = CURRENCY_CODES.filter((c) => amounts.every((a) => amountProblem(a, c, "charge") === null));
  const [row] = await db().$queryRaw<{ code: string }[]>`
    SELECT code FROM unnest(${[...fits]}::text[]) AS code
     WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.currency = code)
       AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.currency = code)
     ORDER BY random() LIMIT 1`;
  if (!row)
    throw new Error("every listed currency has been used on this database: run the tests on a fresh one");
  return row.code;
}

async function orderIn(currency: string, amount: number): Promise<string> {
  const id = randomUUID();
  await db().$executeRaw`
    WITH o AS (INSERT INTO orders (id, account_id, total_minor, currency)
               VALUES (${id}::uuid, ${account.id}::uuid, ${amount}, ${currency}) RETURNING id)
    INSERT INTO order_items (order_id, sku, name, unit_price_minor, quantity, line_total_minor)
    SELECT id, 'TEE-CLASSIC', 'Classic cotton tee', ${amount}, 1, ${amount} FROM o`;
  return id;
}

describe("32 payments at once in one currency (no hot rows, decision 0015)", () => {
  it("books each once; the ledger balances; every account's balance is the sum of its entries", async () => {
    const amounts = Array.from({ length: 32 }, (_, i) => 100 + i);
    const currency = await freshCurrency(amounts);
    const orders = await Promise.all(amounts.map((a) => orderIn(currency, a)));
    // The currency's first payments: all of them find its house accounts missing at once.
    const outcomes = await Promise.all(
      orders.map((orderId) =>
        pay(account, newKey(), { orderId, paymentMethod: "pm_card_visa" }, provider.client),
      ),
    );
    const failures = outcomes.flatMap((o) => (o.ok ? [] : [`${o.error.code}: ${o.error.message}`]));
    expect(failures).toEqual([]);

    const booked = await db().$queryRaw<
      { order_id: string; transactions: number; entries: number; sum: number }[]
    >`
      SELECT p.order_id::text, count(DISTINCT t.id)::int AS transactions, count(e.id)::int AS entries,
             coalesce(sum(e.amount_minor), 0)::int AS sum
        FROM payments p LEFT JOIN ledger_transactions t ON t.payment_id = p.id
        LEFT JOIN ledger_entries e ON e.transaction_id = t.id
       WHERE p.order_id = ANY(${orders}::uuid[]) GROUP BY p.order_id`;
    expect(booked).toHaveLength(32);
    for (const b of booked) expect(b).toMatchObject({ transactions: 1, entries: 2, sum: 0 });

    const check = await verifyLedger(db());
    expect(check.balanced).toBe(true);
    expect(check.totals.find((t) => t.currency === currency)?.sumMinor).toBe(0);

    // Each account's reported balance against its entries, summed here in JavaScript.
    const entries = await db().ledgerEntry.findMany({
      where: { currency },
      select: { amountMinor: true, ledgerAccountId: true },
    });
    const accounts = new Map((await db().ledgerAccount.findMany()).map((a) => [a.id, a]));
    const fromEntries = new Map<string, number>();
    for (const e of entries) {
      const account = accounts.get(e.ledgerAccountId);
      if (!account) throw new Error(`entry on unknown ledger account ${e.ledgerAccountId}`);
      const signed = account.normalSide === "debit" ? Number(e.amountMinor) : -Number(e.amountMinor);
      fromEntries.set(account.code, (fromEntries.get(account.code) ?? 0) + signed);
    }
    const total = amounts.reduce((s, a) => s + a, 0);
    const reported = (await ledgerBalances(db())).filter((b) => b.currency === currency);
    expect(Object.fromEntries(reported.map((b) => [b.code, b.balanceMinor]))).toEqual({
      merchant_revenue: total,
      provider_clearing: total,
    });
    expect(Object.fromEntries(fromEntries)).toEqual({ merchant_revenue: total, provider_clearing: total });
  });
});
