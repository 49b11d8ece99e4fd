import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChargeRow, createChargeOnce, ensureSchema, type NewCharge, SCHEMA } from "./store";
import { databaseUrl, uniqueKey } from "./test-support";

const pool = new pg.Pool({ connectionString: databaseUrl(), max: 4 });
const charge: NewCharge = {
  amount: 500,
  currency: "eur",
  paymentMethod: "pm_card_visa",
  status: "succeeded",
  failureCode: null,
  failureMessage: null,
  metadata: { order: "o-1" },
};
const render = (c: ChargeRow) => ({ status: 201, body: { id: c.id, created: c.createdAt.toISOString() } });

beforeAll(() => ensureSchema(pool));
afterAll(() => pool.end());

async function chargesFor(key: string): Promise<string[]> {
  const result = await pool.query<{ id: string }>(
    `SELECT id FROM ${SCHEMA}.charges WHERE idempotency_key = $1 ORDER BY created_at`,
    [key],
  );
  return result.rows.map((r) => r.id);
}

describe("createChargeOnce in one statement", () => {
  it("stores the charge and the rendered response it returned, byte for byte", async () => {
    const key = uniqueKey("store");
    const first = await createChargeOnce(pool, { key, fingerprint: "f", charge, render });
    if (first.kind !== "created") throw new Error(`expected created, got ${first.kind}`);
    const again = await createChargeOnce(pool, { key, fingerprint: "f", charge, render });
    expect(again).toEqual({ kind: "replayed", response: first.response });
    expect(await createChargeOnce(pool, { key, fingerprint: "other", charge, render })).toEqual({
      kind: "mismatch",
    });
    const row = await pool.query(`SELECT created_at FROM ${SCHEMA}.charges WHERE id = $1`, [first.charge.id]);
    expect(row.rows[0].created_at).toEqual(first.charge.createdAt);
    expect(await chargesFor(key)).toEqual([first.charge.id]);
  });

  it("a key past retention is forgotten: the same key charges anew and names the new charge", async () => {
    const key = uniqueKey("retention");
    const first = await createChargeOnce(pool, {
      key,
      fingerprint: "f",
      charge,
      render,
      retentionSeconds: 1,
    });
    await pool.query(
      `UPDATE ${SCHEMA}.idempotency_keys SET created_at = created_at - interval '2 seconds' WHERE key = $1`,
      [key],
    );
    const second = await createChargeOnce(pool, {
      key,
      fingerprint: "f",
      charge,
      render,
      retentionSeconds: 1,
    });
    if (first.kind !== "created" || second.kind !== "created") throw new Error("expected two new charges");
    expect(second.charge.id).not.toBe(first.charge.id);
    expect(await chargesFor(key)).toEqual([first.charge.id, second.charge.id]);
    const stored = await pool.query(`SELECT charge_id FROM ${SCHEMA}.idempotency_keys WHERE key = $1`, [key]);
    expect(stored.rows).toEqual([{ charge_id: second.charge.id }]);
  });

  it("a key committed under its snapshot's feet rejects the whole statement: in flight, no charge left", async () => {
    // Another writer inserts the key without taking the advisory lock and commits while our
    // statement waits on the key's primary key: the lookup could not see it, the insert cannot win.
    const key = uniqueKey("race");
    const other = await pool.connect();
    try {
      await other.query("BEGIN");
      await other.query(
        `INSERT INTO ${SCHEMA}.charges (id, amount, currency, payment_method, status, idempotency_key, request_fingerprint)
         VALUES ('ch_0a0a', 1, 'eur', 'pm_card_visa', 'succeeded', $1, 'f')`,
        [key],
      );
      await other.query(
        `INSERT INTO ${SCHEMA}.idempotency_keys (key, request_fingerprint, charge_id, response_status, response_body)
         VALUES ($1, 'f', 'ch_0a0a', 201, '{}')`,
        [key],
      );
      const ours = createChargeOnce(pool, { key, fingerprint: "f", charge, render });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await other.query("COMMIT");
      expect(await ours).toEqual({ kind: "in_flight" });
    } finally {
      other.release();
      await pool.query(`DELETE FROM ${SCHEMA}.idempotency_keys WHERE key = $1`, [key]);
      await pool.query(`DELETE FROM ${SCHEMA}.charges WHERE id = 'ch_0a0a'`);
    }
    expect(await chargesFor(key)).toEqual([]);
  });

  it("a slow card holds the key: a duplicate meanwhile is in flight, then replays", async () => {
    const key = uniqueKey("slow");
    const slow = createChargeOnce(pool, { key, fingerprint: "f", charge, render, holdMs: 400 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await createChargeOnce(pool, { key, fingerprint: "f", charge, render })).toEqual({
      kind: "in_flight",
    });
    const done = await slow;
    if (done.kind !== "created") throw new Error(`expected created, got ${done.kind}`);
    expect(await createChargeOnce(pool, { key, fingerprint: "f", charge, render, holdMs: 400 })).toEqual({
      kind: "replayed",
      response: done.response,
    });
    expect(await chargesFor(key)).toEqual([done.charge.id]);
  });
});
