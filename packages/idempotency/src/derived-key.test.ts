import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveKey, deriveKeySql } from "./derived-key.js";
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
