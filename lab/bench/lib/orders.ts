import type pg from "pg";

/**
 * `n` new orders of one T-shirt (25.00 EUR) for the account, made in one statement with ids as
 * orders.create makes them (`newId`), then vacuumed and analysed on the bench's own connection:
 * left to autovacuum, that work fell into whichever load came next and was charged to its payments.
 */
export async function benchOrders(
  db: pg.Pool | pg.Client,
  accountId: string,
  n: number,
  newId: () => string,
): Promise<string[]> {
  const { rows } = await db.query(
    `WITH o AS (INSERT INTO orders (id, account_id, total_minor, currency)
                SELECT id, $1::uuid, 2500, 'EUR' FROM unnest($2::uuid[]) AS id RETURNING id)
     INSERT INTO order_items (order_id, sku, name, unit_price_minor, quantity, line_total_minor)
     SELECT id, 'TEE-CLASSIC', 'Classic cotton tee', 2500, 1, 2500 FROM o RETURNING order_id`,
    [accountId, Array.from({ length: n }, newId)],
  );
  await db.query("VACUUM (ANALYZE) orders, order_items");
  return rows.map((r) => r.order_id as string);
}
