import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeyDb } from "./db.js";
import { deriveKey, deriveKeySql } from "./derived-key.js";
import { KeyOwner } from "./owner.js";
import { sql } from "./sql.js";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

describe("the derived key, in SQL", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase({ migrate: false });
  });
  afterAll(() => database.drop());

  it("is deriveKey's, for any key id, scope and purpose", async () => {
    const cases = fc.sample(
      fc.record({
        id: fc.bigInt({ min: 1n, max: 2n ** 62n }),
        scope: fc.string({ unit: "grapheme", maxLength: 40 }),
        purpose: fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
      }),
      { numRuns: 200, seed: 27 },
    );
    cases.push(
      { id: 1n, scope: "acct\nkey", purpose: "charge" },
      { id: 4096n, scope: "é\n\u{1F600}", purpose: "refund" },
    );
    for (const c of cases) {
      const s = sql`SELECT ${deriveKeySql(c.scope, sql`${c.id}::bigint`, c.purpose)} AS k`;
      const { rows } = await database.pool.query<{ k: string }>(s.text, [...s.values]);
      expect(rows[0]?.k, JSON.stringify({ ...c, id: String(c.id) })).toBe(
        deriveKey(c.scope, c.id, c.purpose),
      );
    }
  });
});

describe("KeyOwner.derivedKey", () => {
  // No statement is sent: the key is derived from the row id, scope and purpose alone.
  const nodb = {} as KeyDb;
  const owner = (keyId: bigint, fence: number, scope: string) =>
    new KeyOwner(nodb, keyId, fence, "started", scope, 1000);

  it("is stable across takeovers, different per purpose, key row and client, and reveals nothing", () => {
    const scope = "acct-1\nclient-key-123";
    const first = owner(7n, 1, scope).derivedKey("charge");
    expect(first).toMatch(/^ick_[0-9a-f]{40}$/);
    expect(owner(7n, 2, scope).derivedKey("charge")).toBe(first);
    expect(owner(7n, 1, scope).derivedKey("refund")).not.toBe(first);
    expect(owner(8n, 1, scope).derivedKey("charge")).not.toBe(first);
    expect(owner(7n, 1, "acct-2\nclient-key-123").derivedKey("charge")).not.toBe(first);
    expect(first).not.toContain("client-key-123");
  });

  it("sorts by key row, so a later key's derived key appends to the indexes that hold it", () => {
    const scope = "acct-1\nclient-key-123";
    const keys = [7n, 8n, 15n, 16n, 255n, 256n, 4096n].map((id) => owner(id, 1, scope).derivedKey("charge"));
    expect(keys).toEqual([...keys].sort());
  });
});
