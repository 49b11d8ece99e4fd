import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { claimTestKey } from "../test/keys";
import { backoffSeconds, findAbandonedKeys, takeOverAbandoned } from "./index";

let account: TestAccount;
beforeAll(async () => {
  account = await createTestAccount("abandoned");
});

async function abandonedKey(
  procedure: string,
  set: { attempts: number; idleSeconds: number; point?: string; dueInSeconds?: number },
) {
  const key = randomUUID();
  const row = await claimTestKey(db(), {
    accountId: account.id,
    key,
    procedure,
    fingerprint: "a".repeat(64),
    requestParams: {},
    leaseSeconds: 30,
    ttlSeconds: 3600,
  });
  await db().$executeRaw`
    UPDATE idempotency_keys SET locked_until = NULL, attempts = ${set.attempts}, recovery_point = ${set.point ?? "work_done"},
           updated_at = now() - make_interval(secs => ${set.idleSeconds}),
           next_recovery_at = now() + make_interval(secs => ${set.dueInSeconds ?? -1})
     WHERE id = ${row?.id}`;
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
    const found = await findAbandonedKeys(db(), {
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
    const [candidate] = await findAbandonedKeys(db(), { procedure, idleSeconds: 5 });
    const backoff = { idleSeconds: 5, maxSeconds: 30 };
    expect(await takeOverAbandoned(db(), candidate as NonNullable<typeof candidate>, backoff)).not.toBeNull();
    const [row] = await db().$queryRaw<{ attempts: number; completer: number; due: number }[]>`
      SELECT attempts, completer_attempts AS completer,
             extract(epoch FROM next_recovery_at - now())::float8 AS due
        FROM idempotency_keys WHERE id = ${id}`;
    expect([row?.attempts, row?.completer]).toEqual([21, 1]);
    expect(row?.due).toBeGreaterThan(3);
    expect(row?.due).toBeLessThanOrEqual(5);
    expect([1, 2, 3, 4, 5, 40].map((n) => backoffSeconds(backoff, n))).toEqual([5, 10, 20, 30, 30, 30]);
  });
});
