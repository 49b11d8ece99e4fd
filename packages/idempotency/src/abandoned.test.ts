import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backoffSeconds, findAbandonedKeys, takeOverAbandoned } from "./abandoned.js";
import { type KeyDb, nodePostgresKeyDb } from "./db.js";
import { claimKey } from "./store.js";
import { freshDatabase, type TestDatabase } from "./testing/database.js";

let database: TestDatabase;
let db: KeyDb<unknown>;
beforeAll(async () => {
  database = await freshDatabase();
  db = nodePostgresKeyDb(database.pool);
});
afterAll(() => database.drop());

async function abandonedKey(
  procedure: string,
  set: { attempts: number; idleSeconds: number; point?: string; dueInSeconds?: number },
) {
  const row = await claimKey(db, {
    accountId: randomUUID(),
    key: randomUUID(),
    procedure,
    fingerprint: "a".repeat(64),
    requestParams: {},
    leaseSeconds: 30,
    ttlSeconds: 3600,
  });
  await database.pool.query(
    `UPDATE idempotency_keys SET locked_until = NULL, attempts = $2, recovery_point = $3,
            updated_at = now() - make_interval(secs => $4),
            next_recovery_at = now() + make_interval(secs => $5)
      WHERE id = $1`,
    [row?.id, set.attempts, set.point ?? "work_done", set.idleSeconds, set.dueInSeconds ?? -1],
  );
  return row?.id as bigint;
}

describe("finding abandoned keys for the completer", () => {
  it("finds every unfinished key when due, however many client retries took it over", async () => {
    const procedure = `test.${randomUUID()}`;
    const fresh = await abandonedKey(procedure, { attempts: 1, idleSeconds: 6 });
    const retriedByClients = await abandonedKey(procedure, { attempts: 26, idleSeconds: 6 });
    const tooSoon = await abandonedKey(procedure, { attempts: 1, idleSeconds: 2 });
    const backingOff = await abandonedKey(procedure, { attempts: 3, idleSeconds: 600, dueInSeconds: 60 });
    const notStarted = await abandonedKey(procedure, { attempts: 1, idleSeconds: 60, point: "started" });
    const found = await findAbandonedKeys(db, {
      procedure,
      skipRecoveryPoints: ["started"],
      idleSeconds: 5,
    });
    expect(found.map((c) => c.id).sort()).toEqual([fresh, retriedByClients].sort());
    for (const id of [tooSoon, backingOff, notStarted]) expect(found.map((c) => c.id)).not.toContain(id);
  });

  it("counts the completer's takeovers apart and schedules its next try on a capped backoff", async () => {
    const procedure = `test.${randomUUID()}`;
    const id = await abandonedKey(procedure, { attempts: 20, idleSeconds: 60 });
    const [candidate] = await findAbandonedKeys(db, { procedure, idleSeconds: 5 });
    const backoff = { idleSeconds: 5, maxSeconds: 30 };
    expect(await takeOverAbandoned(db, candidate as NonNullable<typeof candidate>, backoff)).not.toBeNull();
    const { rows } = await database.pool.query<{ attempts: number; completer: number; due: number }>(
      `SELECT attempts, completer_attempts AS completer,
              extract(epoch FROM next_recovery_at - now())::float8 AS due
         FROM idempotency_keys WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    expect([row?.attempts, row?.completer]).toEqual([21, 1]);
    expect(row?.due).toBeGreaterThan(3);
    expect(row?.due).toBeLessThanOrEqual(5);
    expect([1, 2, 3, 4, 5, 40].map((n) => backoffSeconds(backoff, n))).toEqual([5, 10, 20, 30, 30, 30]);
  });
});
