import { expect, it } from "vitest";
import { db } from "../db";

// Decision 0127: a payment's settlement (pending -> succeeded, its charge id set) is a HOT update
// only while no index on payments names either column; the one-open-payment-per-order index reads
// the generated `holds_order`, and a captured charge is unique on its ledger transaction. Decision
// 0128: that index is also the order's index (holds_order NULL once the payment is closed).
it("no index on payments names its status or its charge id; the open payment and the captured charge stay unique", async () => {
  const indexes = await db().$queryRaw<{ indexname: string; indexdef: string }[]>`
    SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'payments'`;
  expect(indexes.filter((i) => /\b(status|provider_charge_id)\b/.test(i.indexdef))).toEqual([]);
  const defs = new Map(indexes.map((i) => [i.indexname, i.indexdef]));
  expect(defs.get("payments_one_open_per_order")).toMatch(/UNIQUE INDEX .*\(order_id, holds_order\)$/);
  expect(indexes.filter((i) => /\(order_id\)/.test(i.indexdef))).toEqual([]);
  const [capture] = await db().$queryRaw<{ indexdef: string }[]>`
    SELECT indexdef FROM pg_indexes WHERE indexname = 'ledger_transactions_provider_charge_id_key'`;
  expect(capture?.indexdef).toMatch(/UNIQUE INDEX .*\(provider_charge_id\)/);
});
