import { describe, expect, it } from "vitest";
import { db } from "./db";
import { DEMO_CATALOG, DEMO_CUSTOMERS, seedDemoData } from "./seed";

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

  it("prices are positive integers of minor units in one currency", async () => {
    const products = await db().product.findMany();
    expect(products.every((p) => Number.isInteger(p.priceMinor) && p.priceMinor > 0)).toBe(true);
    expect(new Set(products.map((p) => p.currency)).size).toBe(1);
  });
});
