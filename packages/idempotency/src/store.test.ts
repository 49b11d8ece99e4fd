import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeyDb, nodePostgresKeyDb, type PgClientLike } from "./db.js";
import { isRequirementFailure, requirement, sql } from "./sql.js";
import { claimKey, completeKeyWith, releaseKey, renewLease } from "./store.js";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

let database: TestDatabase;
let db: KeyDb<PgClientLike>;
beforeAll(async () => {
  database = await freshDatabase();
  db = nodePostgresKeyDb(database.pool);
});
afterAll(() => database.drop());

const claim = async () => {
  const row = await claimKey(db, {
    accountId: randomUUID(),
    key: randomUUID(),
    procedure: "test.store",
    fingerprint: "b".repeat(64),
    requestParams: {},
    leaseSeconds: 30,
    ttlSeconds: 3600,
  });
  if (!row) throw new Error("no claim");
  return row;
};

describe("the lease", () => {
  it("is not renewed after it was released, so a late heartbeat cannot lock the key again", async () => {
    const { id } = await claim();
    expect(await renewLease(db, id, 1)).toBe(true);
    expect(await releaseKey(db, id, 1, "boom")).toBe(true);
    expect(await renewLease(db, id, 1)).toBe(false);
    const { rows } = await database.pool.query("SELECT locked_until FROM idempotency_keys WHERE id = $1", [
      id,
    ]);
    expect(rows[0]?.locked_until).toBeNull();
  });
});

describe("a completion with the handler's writes in one statement", () => {
  const NOTE_WRITTEN = requirement("test.note_written");
  const STILL_OPEN = requirement("test.still_open", { fenced: true });
  const writes = (ok: { note: boolean; open: boolean }) => (b: import("./sql.js").StatementBuilder) => {
    const note = b.cte<"n">(sql`SELECT 1 AS n WHERE ${ok.note}`, "note");
    b.require(sql`(SELECT count(*) FROM ${note}) = 1`, NOTE_WRITTEN);
    b.require(sql`${ok.open}`, STILL_OPEN);
  };
  const stateOf = async (id: bigint) =>
    (await database.pool.query("SELECT state FROM idempotency_keys WHERE id = $1", [id])).rows[0]?.state;

  it("completes the key when every requirement holds", async () => {
    const { id, fence } = await claim();
    expect(await completeKeyWith(db, id, fence, 200, "{}", writes({ note: true, open: true }))).toBe(true);
    expect(await stateOf(id)).toBe("completed");
  });

  it("fails a requirement by its code, committing nothing", async () => {
    const { id, fence } = await claim();
    const error = await completeKeyWith(db, id, fence, 200, "{}", writes({ note: false, open: true })).catch(
      (e: unknown) => e,
    );
    expect(isRequirementFailure(error, NOTE_WRITTEN)).toBe(true);
    expect(await stateOf(id)).toBe("in_progress");
  });

  it("answers false (a lost fence) for a fenced requirement, and for a key taken over", async () => {
    const a = await claim();
    expect(await completeKeyWith(db, a.id, a.fence, 200, "{}", writes({ note: true, open: false }))).toBe(
      false,
    );
    const b = await claim();
    expect(await completeKeyWith(db, b.id, b.fence + 1, 200, "{}", writes({ note: true, open: true }))).toBe(
      false,
    );
    expect([await stateOf(a.id), await stateOf(b.id)]).toEqual(["in_progress", "in_progress"]);
  });
});
