import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { directTestDatabaseUrl } from "../test/fixtures";
import { consume, LIMIT_RULES, sendLimitsThrough } from ".";

// One connection each, so pg_prepared_statements (per session) sees what the limiter sent.
const namedPool = new pg.Pool({ connectionString: directTestDatabaseUrl(), max: 1 });
const unnamedPool = new pg.Pool({ connectionString: directTestDatabaseUrl(), max: 1 });
afterAll(() => Promise.all([namedPool.end(), unnamedPool.end()]));

const preparedUpserts = async (pool: pg.Pool) =>
  (await pool.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'rate_limits:%'")).rows.map(
    (r) => r.name as string,
  );

describe("the limiter's statements", () => {
  it("are prepared once per connection where prepared statements are on, and unnamed for PgBouncer", async () => {
    const rule = { ...LIMIT_RULES.paymentsByAccount, points: 5 };
    for (const [pool, named] of [
      [namedPool, true],
      [unnamedPool, false],
    ] as const) {
      const restore = sendLimitsThrough(pool, { named });
      try {
        const subject = randomUUID();
        for (let i = 0; i < 5; i++) expect(await consume(rule, subject)).toEqual({ ok: true });
        // Named or not, the same counter: the sixth is refused.
        expect((await consume(rule, subject)).ok).toBe(false);
      } finally {
        restore();
      }
      expect(await preparedUpserts(pool)).toEqual(named ? ["rate_limits:rlflx-upsert"] : []);
    }
  });
});
