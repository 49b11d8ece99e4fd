import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { CURRENCY_CODES } from "../../shared/currency";
import { db } from "../db";
import { createTestAccount } from "../test/fixtures";
import { createTestOrder } from "../test/payments";
import { ensureHouseAccounts, postPaymentCapture } from "./postings";
import { ledgerBalances, verifyLedger } from "./verify";

/** A pending payment row to hang ledger entries on, written directly. */
async function plantPayment(amount = 1000) {
  const account = await createTestAccount("ledger");
  const order = await createTestOrder(account);
  const id = randomUUID();
  await db().$executeRaw`
    INSERT INTO payments (id, order_id, account_id, amount_minor, currency, payment_method, provider_key, status)
    VALUES (${id}::uuid, ${order.id}::uuid, ${account.id}::uuid, ${amount}, 'EUR', 'pm_card_visa', ${`planted_${id}`}, 'declined')`;
  return id;
}

async function accountId(code: string) {
  const rows = await db().$queryRaw<
    { id: number }[]
  >`SELECT id FROM ledger_accounts WHERE code = ${code} AND currency = 'EUR'`;
  return rows[0]?.id as number;
}

let clearing: number;
let revenue: number;
beforeAll(async () => {
  clearing = await accountId("provider_clearing");
  revenue = await accountId("merchant_revenue");
});

/** Raw SQL in one transaction, as any code path (or a person at psql) could write it. */
function rawTransaction(statements: (tx: ReturnType<typeof db>) => Promise<unknown>) {
  return db().$transaction(async (tx) => statements(tx as unknown as ReturnType<typeof db>));
}

describe("the database keeps the ledger's invariants", () => {
  it("rejects an unbalanced ledger transaction at commit", async () => {
    const paymentId = await plantPayment();
    const txId = randomUUID();
    await expect(
      rawTransaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_transactions (id, payment_id, kind, description) VALUES (${txId}::uuid, ${paymentId}::uuid, 'test', 'unbalanced')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${clearing}, ${paymentId}::uuid, 'provider_clearing', 1000, 'EUR')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${revenue}, ${paymentId}::uuid, 'revenue', -999, 'EUR')`;
      }),
    ).rejects.toThrow(/unbalanced/);
    expect(await db().ledgerTransaction.count({ where: { id: txId } })).toBe(0);
  });

  it("rejects a single-legged transaction", async () => {
    const paymentId = await plantPayment();
    const txId = randomUUID();
    await expect(
      rawTransaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_transactions (id, payment_id, kind, description) VALUES (${txId}::uuid, ${paymentId}::uuid, 'test', 'one leg')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${clearing}, ${paymentId}::uuid, 'provider_clearing', 10, 'EUR')`;
      }),
    ).rejects.toThrow(/unbalanced: 1 entries/);
  });

  it("rejects a second entry of the same type for a payment", async () => {
    const paymentId = await plantPayment(700);
    await db().$transaction((tx) =>
      postPaymentCapture(tx, { paymentId, amountMinor: 700, currency: "EUR", description: "first" }),
    );
    const txId = randomUUID();
    await expect(
      rawTransaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_transactions (id, payment_id, kind, description) VALUES (${txId}::uuid, ${paymentId}::uuid, 'again', 'duplicate')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${clearing}, ${paymentId}::uuid, 'provider_clearing', 700, 'EUR')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${revenue}, ${paymentId}::uuid, 'revenue', -700, 'EUR')`;
      }),
    ).rejects.toThrow(/ledger_entries_payment_id_entry_type_key|unique/i);
  });

  it("refuses to take an account that must not go negative below zero", async () => {
    const paymentId = await plantPayment();
    const balance = (await ledgerBalances(db())).find(
      (b) => b.code === "provider_clearing" && b.currency === "EUR",
    );
    const tooMuch = (balance?.balanceMinor ?? 0) + 1;
    const txId = randomUUID();
    await expect(
      rawTransaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_transactions (id, payment_id, kind, description) VALUES (${txId}::uuid, ${paymentId}::uuid, 'reversal', 'more than held')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${clearing}, ${paymentId}::uuid, 'clearing_reversal', ${-tooMuch}, 'EUR')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${revenue}, ${paymentId}::uuid, 'revenue_reversal', ${tooMuch}, 'EUR')`;
      }),
    ).rejects.toThrow(/provider_clearing \(EUR\) may not go negative/);
  });

  it("keeps entries append-only and in their account's currency", async () => {
    await expect(
      db()
        .$executeRaw`UPDATE ledger_entries SET amount_minor = amount_minor + 1 WHERE id = (SELECT min(id) FROM ledger_entries)`,
    ).rejects.toThrow(/append-only/);
    const paymentId = await plantPayment();
    const txId = randomUUID();
    await expect(
      rawTransaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_transactions (id, payment_id, kind, description) VALUES (${txId}::uuid, ${paymentId}::uuid, 'fx', 'wrong currency')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${clearing}, ${paymentId}::uuid, 'provider_clearing', 5, 'USD')`;
      }),
    ).rejects.toThrow(/posted to account/);
  });

  // Decision 0128: no foreign key from a leg to its account (its row lock was taken on the two house
  // accounts by every capture); a trigger checks the account and accounts are never deleted.
  it("refuses a leg on an account that does not exist, and keeps every ledger account", async () => {
    const paymentId = await plantPayment();
    const txId = randomUUID();
    const missing = 2_000_000_000;
    await expect(
      rawTransaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO ledger_transactions (id, payment_id, kind, description) VALUES (${txId}::uuid, ${paymentId}::uuid, 'test', 'no such account')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${clearing}, ${paymentId}::uuid, 'provider_clearing', 10, 'EUR')`;
        await tx.$executeRaw`INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency) VALUES (${txId}::uuid, ${missing}, ${paymentId}::uuid, 'revenue', -10, 'EUR')`;
      }),
    ).rejects.toThrow(/ledger account 2000000000, which does not exist/);
    expect(await db().ledgerTransaction.count({ where: { id: txId } })).toBe(0);
    await expect(db().$executeRaw`DELETE FROM ledger_accounts WHERE id = ${revenue}`).rejects.toThrow(
      /kept for ever/,
    );
    await expect(
      db().$executeRaw`UPDATE ledger_accounts SET id = ${missing} WHERE id = ${revenue}`,
    ).rejects.toThrow(/kept for ever/);
    expect(await accountId("merchant_revenue")).toBe(revenue);
  });

  it("a correct capture balances and the live check agrees", async () => {
    const paymentId = await plantPayment(1234);
    await db().$transaction((tx) =>
      postPaymentCapture(tx, { paymentId, amountMinor: 1234, currency: "EUR", description: "ok" }),
    );
    const check = await verifyLedger(db());
    expect(check.balanced).toBe(true);
    expect(check.totals.every((t) => t.sumMinor === 0)).toBe(true);
  });

  it("keeps accounts only in the currencies Stripe lists: the database's list is shared/currency's", async () => {
    await expect(
      db()
        .$executeRaw`INSERT INTO ledger_accounts (code, name, currency, normal_side) VALUES ('provider_clearing', 'x', 'QQQ', 'debit')`,
    ).rejects.toThrow(/ledger_accounts_currency_listed/);
    await expect(ensureHouseAccounts(db(), "QQQ")).rejects.toThrow(/not a currency Stripe lists/);
    const [check] = await db().$queryRaw<{ def: string }[]>`
      SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'ledger_accounts_currency_listed'`;
    const listed = [...(check?.def ?? "").matchAll(/'([A-Z]{3})'/g)].map((m) => m[1]).sort();
    expect(listed).toEqual([...CURRENCY_CODES].sort());
  });
});
