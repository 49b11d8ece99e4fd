import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db, rawQuery } from "../db";
import { adminCaller } from "../test/admin";
import { createTestAccount } from "../test/fixtures";
import { ordersStatement, paymentsStatement, refundsStatement, type TListSearch, ZListSearch } from "./lists";

// The console's lists (decision 0201): searches by id, email, amount, status and dates, a keyset
// cursor, and plans that read an index in the list's order rather than sorting the table.

async function seedPayments(n: number) {
  const account = await createTestAccount("lists");
  const base = Date.parse("2026-11-01T00:00:00.000Z") + Math.floor(Math.random() * 1e9);
  const ids: { orderId: string; paymentId: string; at: Date }[] = [];
  for (let i = 0; i < n; i++) {
    const orderId = randomUUID();
    const paymentId = randomUUID();
    const at = new Date(base + i * 60_000);
    await db().$executeRaw`INSERT INTO orders (id, account_id, status, total_minor, currency, created_at)
      VALUES (${orderId}::uuid, ${account.id}::uuid, 'pending_payment', ${1000 + i}, 'EUR', ${at})`;
    await db()
      .$executeRaw`INSERT INTO payments (id, order_id, account_id, amount_minor, currency, payment_method,
        status, provider_key, created_at)
      VALUES (${paymentId}::uuid, ${orderId}::uuid, ${account.id}::uuid, ${1000 + i}, 'EUR', 'pm_card_visa',
        ${i % 2 ? "declined" : "failed"}, ${`lists-${paymentId}`}, ${at})`;
    ids.push({ orderId, paymentId, at });
  }
  return { account, ids };
}

describe("the console's lists", () => {
  it("find payments and orders by id, email, amount, status and date range, a page at a time", async () => {
    const { account, ids } = await seedPayments(5);
    const admin = adminCaller().admin;
    const byEmail = await admin.payments.list({
      q: `${account.handle}@example.test`.toUpperCase(),
      limit: 2,
    });
    expect(byEmail.rows.map((r) => r.id)).toEqual([ids[4]?.paymentId, ids[3]?.paymentId]);
    const next = await admin.payments.list({
      q: `${account.handle}@example.test`,
      limit: 2,
      cursor: byEmail.nextCursor ?? "",
    });
    const last = await admin.payments.list({
      q: `${account.handle}@example.test`,
      limit: 2,
      cursor: next.nextCursor ?? "",
    });
    expect([...next.rows, ...last.rows].map((r) => r.id)).toEqual([2, 1, 0].map((i) => ids[i]?.paymentId));
    expect(last.nextCursor).toBeNull();

    expect((await admin.payments.list({ q: ids[2]?.orderId })).rows.map((r) => r.id)).toEqual([
      ids[2]?.paymentId,
    ]);
    expect((await admin.orders.list({ q: ids[2]?.paymentId })).rows.map((r) => r.id)).toEqual([
      ids[2]?.orderId,
    ]);
    const paidOnes = await admin.payments.list({ q: `${account.handle}@example.test`, status: "declined" });
    expect(paidOnes.rows.map((r) => r.amountMinor)).toEqual([1003, 1001]);
    expect(
      (await admin.payments.list({ q: `${account.handle}@example.test`, amountMinor: 1002 })).rows,
    ).toHaveLength(1);
    const window = await admin.orders.list({
      q: account.handle,
      from: ids[1]?.at.toISOString(),
      to: ids[3]?.at.toISOString(),
    });
    expect(window.rows.map((r) => r.id)).toEqual([ids[2]?.orderId, ids[1]?.orderId]);
    expect(window.rows[0]).toMatchObject({
      email: `${account.handle}@example.test`,
      totalMinor: 1002,
      currency: "EUR",
    });
    await expect(admin.refunds.list({ cursor: "bm90LWEtY3Vyc29y" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("read an index in the list's order for every search, never sorting the table", async () => {
    const cursor = Buffer.from(`2026-12-01T00:00:00.000Z|${randomUUID()}`).toString("base64url");
    const searches: [string, Partial<TListSearch>, RegExp][] = [
      ["newest", {}, /payments_created_at_id_idx/],
      ["next page", { cursor }, /payments_created_at_id_idx/],
      ["email", { q: "alice@example.com" }, /payments_account_id_created_at_id_idx/],
      // No index names a status (settlements stay HOT): the newest-first index, filtered. An
      // amount is never updated: its own index (decision 0232).
      ["status", { status: "succeeded" }, /payments_created_at_id_idx/],
      ["amount", { amountMinor: 2500 }, /payments_amount_minor_created_at_id_idx/],
      ["dates", { from: "2026-11-01T00:00:00Z", to: "2026-11-02T00:00:00Z" }, /payments_created_at_id_idx/],
      ["id", { q: randomUUID() }, /payments_pkey/],
    ];
    await db().$transaction(async (tx) => {
      // The test database is small: forbid the sequential scan a tiny table would get, as a
      // million rows would, then check no plan sorts (the order comes from the index).
      await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
      for (const [name, search, index] of searches) {
        // Nor a bitmap scan and its sort, which a few matching rows on a test database can get
        // (an id search needs one: it matches the payment's id or its order's, an OR of two indexes).
        await tx.$executeRawUnsafe(`SET LOCAL enable_bitmapscan = ${name === "id" ? "on" : "off"}`);
        const statement = paymentsStatement(ZListSearch.parse(search));
        const plan = (
          await rawQuery<{ "QUERY PLAN": string }>(tx, {
            text: `EXPLAIN ${statement.text}`,
            values: statement.values,
          })
        )
          .map((r) => r["QUERY PLAN"])
          .join("\n");
        expect(plan, name).toMatch(index);
        if (name !== "id") expect(plan, name).not.toMatch(/\bSort\b/);
      }
      for (const statement of [
        ordersStatement(ZListSearch.parse({})),
        refundsStatement(ZListSearch.parse({})),
      ]) {
        const plan = (
          await rawQuery<{ "QUERY PLAN": string }>(tx, {
            text: `EXPLAIN ${statement.text}`,
            values: statement.values,
          })
        )
          .map((r) => r["QUERY PLAN"])
          .join("\n");
        expect(plan).toMatch(/(orders|refunds)_created_at_id_idx/);
        expect(plan).not.toMatch(/\bSort\b/);
      }
    });
  });
});
