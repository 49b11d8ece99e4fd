import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeyDb, nodePostgresKeyDb } from "./db.js";
import { countKeysByState, findKey, listKeys } from "./inspect.js";
import { claimKey, completeKey } from "./store.js";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

let database: TestDatabase;
let db: KeyDb<unknown>;
beforeAll(async () => {
  database = await freshDatabase();
  db = nodePostgresKeyDb(database.pool);
});
afterAll(() => database.drop());

const accountId = randomUUID();
const claim = async (key: string) => {
  const row = await claimKey(db, {
    accountId,
    key,
    procedure: "test.inspect",
    fingerprint: "c".repeat(64),
    requestParams: { amount: 1 },
    leaseSeconds: 30,
    ttlSeconds: 3600,
  });
  if (!row) throw new Error("no claim");
  return row;
};

/** The read API through node-postgres, which gives an int8 as a string: ids still come back as bigints. */
describe("reading keys through the node-postgres adapter", () => {
  it("lists, finds with its history, and counts by state", async () => {
    const done = await claim(`done-${randomUUID()}`);
    await completeKey(db, null, done.id, done.fence, 200, JSON.stringify({ data: { b: 1, a: 2 } }));
    const running = await claim(`running-${randomUUID()}`);

    const listed = await listKeys(db, { accountIds: [accountId], limit: 10 });
    expect(listed.map((k) => [k.id, k.state])).toEqual([
      [running.id, "in_progress"],
      [done.id, "completed"],
    ]);
    expect(typeof listed[0]?.id).toBe("bigint");

    const found = await findKey(db, { id: done.id });
    expect(found?.responseBody).toEqual({ data: { b: 1, a: 2 } });
    expect(found?.requestParams).toEqual({ amount: 1 });
    expect(found?.events.map((e) => e.kind)).toEqual(["claimed", "completed"]);
    expect(found?.events.every((e) => typeof e.id === "bigint")).toBe(true);

    expect(await countKeysByState(db)).toMatchObject({ completed: 1, in_progress: 1 });
  });
});
