import { describe, expect, it } from "vitest";
import { amountProblem, currencyOf } from "../shared/currency";
import { db } from "./db";
import { DEMO_CATALOG, DEMO_CURRENCY, DEMO_CUSTOMERS, seedDemoData, stockDemoProducts } from "./seed";

describe("the demo seed", () => {
  it("has run on the test database and never runs twice", async () => {
    for (const c of DEMO_CUSTOMERS) expect(await db().account.count({ where: { handle: c.handle } })).toBe(1);
    expect(await db().product.count({ where: { sku: { in: DEMO_CATALOG.map((p) => p.sku) } } })).toBe(
      DEMO_CATALOG.length,
    );
    const results = await Promise.all([
      seedDemoData(db(), { production: false }),
      seedDemoData(db(), { production: false }),
    ]);
    expect(results).toEqual([false, false]);
    expect(await db().account.count({ where: { handle: "alice" } })).toBe(1);
  });

  it("creates nothing in production", async () => {
    expect(await seedDemoData(db(), { production: true })).toBe(false);
  });

  it("prices are valid in their currency as Stripe defines it, one of them in a zero-decimal currency", async () => {
    const products = await db().product.findMany({ where: { sku: { in: DEMO_CATALOG.map((p) => p.sku) } } });
    for (const p of products)
      expect(amountProblem(p.priceMinor, p.currency, "price"), `${p.sku} ${p.currency}`).toBeNull();
    expect(products.some((p) => currencyOf(p.currency)?.exponent === 0)).toBe(true);
    // The shop lists by SKU: its first products are in the main currency (the e2e tests order them).
    const listed = [...products].sort((a, b) => (a.sku < b.sku ? -1 : 1));
    expect(listed.slice(0, 2).map((p) => p.currency)).toEqual([DEMO_CURRENCY, DEMO_CURRENCY]);
  });

  it("a demo product missing from a seeded database is stocked again", async () => {
    // In a transaction rolled back at the end: other test files order the demo products meanwhile.
    const sku = DEMO_CATALOG[DEMO_CATALOG.length - 1]?.sku ?? "";
    const rollback = new Error("rollback");
    let found: unknown;
    await db()
      .$transaction(async (tx) => {
        await tx.product.delete({ where: { sku } });
        await stockDemoProducts(tx);
        found = await tx.product.findUnique({ where: { sku } });
        throw rollback;
      })
      .catch((e: unknown) => {
        if (e !== rollback) throw e;
      });
    expect(found).toMatchObject({ sku, currency: "JPY", priceMinor: 1800 });
  });
});
