import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect } from "vitest";
import { db } from "../db";
import { createTestAccount, directTestDatabaseUrl, type TestAccount } from "../test/fixtures";
import { newKey } from "../test/payments";
import { declinedPayment, paidPayment, refund } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { databaseRefusal } from "./refusals";

/**
 * The database's own refusals, with the application bypassed: raw statements on connections of
 * their own, as a script, a migration or a bug would send them.
 */
let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("refund-invariants");
});

async function withClient<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: directTestDatabaseUrl() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

const insertRefund = (c: pg.Client, paymentId: string, amount: number, status = "pending") =>
  c.query(
    `INSERT INTO refunds (id, payment_id, account_id, amount_minor, currency, reason, status, provider_key, created_by, provider_refund_id)
     SELECT $1::uuid, p.id, p.account_id, $2::int, p.currency, 'raw', $3, $4, 'raw sql', CASE WHEN $3 = 'succeeded' THEN $4 END
       FROM payments p WHERE p.id = $5::uuid`,
    [randomUUID(), amount, status, `raw_${randomUUID()}`, paymentId],
  );

/** The SQLSTATE and constraint name of a refusal: the code callers match, never the message. */
const refusal = (error: unknown) => {
  const e = error as { code?: string; constraint?: string };
  return { code: e.code, constraint: e.constraint };
};

describe("refunds of one payment never total more than it captured", () => {
  it("20 concurrent inserts on 20 connections, each holding its transaction open a moment: only what fits commits", async () => {
    const paid = await paidPayment(account, provider.client);
    const each = 700;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        withClient(async (c) => {
          await c.query("BEGIN");
          try {
            await insertRefund(c, paid.paymentId, each);
            await c.query("SELECT pg_sleep(0.05)");
            await c.query("COMMIT");
          } catch (error) {
            await c.query("ROLLBACK");
            throw error;
          }
        }),
      ),
    );
    const fits = Math.floor(paid.amount / each);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(fits);
    const refused = results.flatMap((r) => (r.status === "rejected" ? [refusal(r.reason)] : []));
    expect(refused).toEqual(Array(20 - fits).fill({ code: "23514", constraint: "refunds_within_captured" }));
    const [sum] = await db().$queryRaw<{ total: number }[]>`
      SELECT coalesce(sum(amount_minor), 0)::int AS total FROM refunds WHERE payment_id = ${paid.paymentId}::uuid`;
    expect(sum?.total).toBe(fits * each);
  });

  it("counts pending and succeeded refunds, not failed ones; the app's refunds and raw ones alike", async () => {
    const paid = await paidPayment(account, provider.client);
    expect(
      await refund(
        newKey(),
        { paymentId: paid.paymentId, amountMinor: 1000, reason: "app" },
        provider.client,
      ),
    ).toMatchObject({ ok: true });
    await withClient(async (c) => {
      await insertRefund(c, paid.paymentId, paid.amount - 1000, "failed");
      await insertRefund(c, paid.paymentId, paid.amount - 1001);
      await expect(insertRefund(c, paid.paymentId, 2)).rejects.toMatchObject({
        code: "23514",
        constraint: "refunds_within_captured",
      });
      await insertRefund(c, paid.paymentId, 1);
    });
  });

  it("refuses to decide under REPEATABLE READ, whose snapshot would predate the payment's lock", async () => {
    const paid = await paidPayment(account, provider.client);
    await withClient(async (c) => {
      await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      const misuse = await insertRefund(c, paid.paymentId, 1).then(
        () => undefined,
        (error: unknown) => error,
      );
      // Its own code (issue 36): a misuse, not an over-refund, so the app answers no 422 for it.
      expect(refusal(misuse)).toEqual({ code: "23514", constraint: "refunds_isolation_level" });
      expect(databaseRefusal(misuse)).toBeUndefined();
      await c.query("ROLLBACK");
      await c.query("BEGIN ISOLATION LEVEL SERIALIZABLE");
      await insertRefund(c, paid.paymentId, 1);
      await c.query("COMMIT");
    });
  });

  it("refuses a refund of a payment that did not succeed", async () => {
    const payment = await declinedPayment(account, provider.client);
    await withClient(async (c) => {
      await expect(insertRefund(c, payment.id, 1)).rejects.toMatchObject({
        code: "23514",
        constraint: "refunds_payment_succeeded",
      });
    });
  });

  it("a settled refund is final, and its payment, amount and currency never change", async () => {
    const paid = await paidPayment(account, provider.client);
    const done = await refund(
      newKey(),
      { paymentId: paid.paymentId, amountMinor: 300, reason: "app" },
      provider.client,
    );
    if (!done.ok) throw done.error;
    await withClient(async (c) => {
      await expect(
        c.query(`UPDATE refunds SET status = 'failed' WHERE id = $1`, [done.data.id]),
      ).rejects.toMatchObject({
        constraint: "refunds_settled_final",
      });
      await expect(
        c.query(`UPDATE refunds SET amount_minor = 1 WHERE id = $1`, [done.data.id]),
      ).rejects.toMatchObject({
        constraint: "refunds_immutable",
      });
    });
  });
});

describe("a refund's reversal in the ledger", () => {
  async function bookedRefund() {
    const paid = await paidPayment(account, provider.client);
    const done = await refund(
      newKey(),
      { paymentId: paid.paymentId, amountMinor: 400, reason: "app" },
      provider.client,
    );
    if (!done.ok) throw done.error;
    return { ...paid, refundId: done.data.id };
  }
  /** A second reversal transaction for the refund, with these amounts on clearing and revenue. */
  const reverse = (
    c: pg.Client,
    r: { paymentId: string; refundId: string },
    clearing: number,
    revenue: number,
    kind = "refund_reversal_again",
  ) =>
    c.query(
      `WITH t AS (INSERT INTO ledger_transactions (id, payment_id, refund_id, kind, description)
                  VALUES ($1::uuid, $2::uuid, $3::uuid, $4, 'raw') RETURNING id)
       INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, refund_id, entry_type, amount_minor, currency)
       SELECT t.id, a.id, $2::uuid, $3::uuid, CASE a.code WHEN 'provider_clearing' THEN 'raw_clearing' ELSE 'raw_revenue' END,
              CASE a.code WHEN 'provider_clearing' THEN $5::bigint ELSE $6::bigint END, 'EUR'
         FROM t, ledger_accounts a WHERE a.currency = 'EUR' AND a.code IN ('provider_clearing', 'merchant_revenue')`,
      [randomUUID(), r.paymentId, r.refundId, kind, clearing, revenue],
    );

  it("is one transaction per refund and kind, and one entry per refund and type", async () => {
    const r = await bookedRefund();
    await withClient(async (c) => {
      await expect(reverse(c, r, -400, 400, "refund_reversal")).rejects.toMatchObject({
        code: "23505",
        constraint: "ledger_transactions_refund_kind_key",
      });
    });
  });

  it("refuses legs that do not reverse the capture by the refund's amount, and an unbalanced transaction", async () => {
    const r = await bookedRefund();
    await withClient(async (c) => {
      // More than the refund's amount.
      await expect(reverse(c, r, -401, 401)).rejects.toMatchObject({
        code: "23514",
        constraint: "ledger_entries_refund_reversal",
      });
      // The capture's direction, not its reversal.
      await expect(reverse(c, r, 400, -400)).rejects.toMatchObject({
        code: "23514",
        constraint: "ledger_entries_refund_reversal",
      });
      // Unbalanced: refused at commit by the ledger's own balance check.
      await c.query("BEGIN");
      await c.query(
        `WITH t AS (INSERT INTO ledger_transactions (id, payment_id, refund_id, kind, description)
                    VALUES ($1::uuid, $2::uuid, $3::uuid, 'raw_one_leg', 'raw') RETURNING id)
         INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, refund_id, entry_type, amount_minor, currency)
         SELECT t.id, a.id, $2::uuid, $3::uuid, 'raw_one_leg', 400, 'EUR'
           FROM t, ledger_accounts a WHERE a.currency = 'EUR' AND a.code = 'merchant_revenue'`,
        [randomUUID(), r.paymentId, r.refundId],
      );
      await expect(c.query("COMMIT")).rejects.toMatchObject({ code: "23514" });
    });
  });
});

describe("the app reads the trigger's refusal by its code", () => {
  it("through Prisma's adapter and its transaction, as phase 1 meets it", async () => {
    const paid = await paidPayment(account, provider.client);
    const declined = await declinedPayment(account, provider.client);
    const attempt = (paymentId: string, amount: number) =>
      db()
        .$transaction(
          (tx) =>
            tx.$executeRaw`
            INSERT INTO refunds (id, payment_id, account_id, amount_minor, currency, reason, provider_key, created_by)
            SELECT ${randomUUID()}::uuid, p.id, p.account_id, ${amount}::int, p.currency, 'raw', ${`raw_${randomUUID()}`}, 'raw'
              FROM payments p WHERE p.id = ${paymentId}::uuid`,
        )
        .then(
          () => "inserted",
          (error: unknown) => databaseRefusal(error) ?? "unrecognised",
        );
    expect(await attempt(paid.paymentId, paid.amount + 1)).toBe("refunds_within_captured");
    expect(await attempt(declined.id, 1)).toBe("refunds_payment_succeeded");
    expect(await attempt(paid.paymentId, 1)).toBe("inserted");
  });
});
