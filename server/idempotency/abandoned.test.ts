import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { findAbandonedKeys, MAX_ATTEMPTS } from "./abandoned";
import { claimKey, releaseKey, renewLease } from "./store";

let account: TestAccount;
beforeAll(async () => {
  account = await createTestAccount("abandoned");
});

async function abandonedKey(
  procedure: string,
  set: { attempts: number; idleSeconds: number; point?: string },
) {
  const key = randomUUID();
  const row = await claimKey(db(), {
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
           updated_at = now() - make_interval(secs => ${set.idleSeconds})
     WHERE id = ${row?.id}`;
  return row?.id as bigint;
}

describe("finding abandoned keys for the completer", () => {
  it("backs off a key that keeps failing and gives it up after MAX_ATTEMPTS", async () => {
    const procedure = `test.${randomUUID()}`;
    const fresh = await abandonedKey(procedure, { attempts: 1, idleSeconds: 6 });
    const thirdTryTooSoon = await abandonedKey(procedure, { attempts: 3, idleSeconds: 10 }); // needs 5 × 4 s
    const thirdTryDue = await abandonedKey(procedure, { attempts: 3, idleSeconds: 25 });
    const givenUp = await abandonedKey(procedure, { attempts: MAX_ATTEMPTS, idleSeconds: 100_000 });
    const notStarted = await abandonedKey(procedure, { attempts: 1, idleSeconds: 60, point: "started" });
    const found = await findAbandonedKeys(db(), {
      procedure,
      skipRecoveryPoints: ["started"],
      idleSeconds: 5,
    });
    expect(found.map((c) => c.id).sort()).toEqual([fresh, thirdTryDue].sort());
    expect(found.map((c) => c.id)).not.toContain(thirdTryTooSoon);
    expect(found.map((c) => c.id)).not.toContain(givenUp);
    expect(found.map((c) => c.id)).not.toContain(notStarted);
  });
});

describe("the lease", () => {
  it("is not renewed after it was released, so a late heartbeat cannot lock the key again", async () => {
    const row = await claimKey(db(), {
      accountId: account.id,
      key: randomUUID(),
      procedure: "test.renew",
      fingerprint: "b".repeat(64),
      requestParams: {},
      leaseSeconds: 30,
      ttlSeconds: 3600,
    });
    const id = row?.id as bigint;
    expect(await renewLease(db(), id, 1)).toBe(true);
    expect(await releaseKey(db(), id, 1, "boom")).toBe(true);
    expect(await renewLease(db(), id, 1)).toBe(false);
    const after = await db().idempotencyKey.findUniqueOrThrow({ where: { id } });
    expect(after.lockedUntil).toBeNull();
  });
});
