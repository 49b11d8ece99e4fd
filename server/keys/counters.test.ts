import { randomUUID } from "node:crypto";
import type { Outcome } from "@idempotent-checkout/idempotency/admin";
import { TRPCError } from "@trpc/server";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestCaller, ensureEffectsTable, hooks } from "../test/idempotent-router";
import { counters } from "../test/keys";

// expired_swept is counted in sweep.test.ts, the only file that lets keys expire.

type Input = { amount: number; note: string; sleepMs?: number; fail?: "business" | "unexpected" };

async function call(account: TestAccount, key: string, input: Input) {
  const ctx = contextFor(account, { "idempotency-key": key });
  try {
    return { data: await createTestCaller(ctx).effect(input) };
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    return { error };
  }
}

/** The outcomes counted while `run` ran, zeros left out. */
async function countedDuring(run: () => Promise<unknown>): Promise<Partial<Record<Outcome, number>>> {
  const before = counters.processTotals();
  await run();
  const after = counters.processTotals();
  return Object.fromEntries(
    Object.entries(after)
      .map(([o, n]) => [o, n - before[o as Outcome]] as const)
      .filter(([, d]) => d !== 0),
  );
}

let account: TestAccount;
beforeAll(async () => {
  await ensureEffectsTable(db());
  account = await createTestAccount("counters");
});
afterEach(() => {
  hooks.beforeComplete = undefined;
});

describe("outcome counters", () => {
  it("a fresh request: claimed and completed; a replay: replayed; another body: fingerprint_mismatch", async () => {
    const key = randomUUID();
    const input = { amount: 1, note: "counted" };
    expect(await countedDuring(() => call(account, key, input))).toEqual({ claimed: 1, completed: 1 });
    expect(await countedDuring(() => call(account, key, input))).toEqual({ replayed: 1 });
    expect(await countedDuring(() => call(account, key, { ...input, amount: 2 }))).toEqual({
      fingerprint_mismatch: 1,
    });
  });

  it("a duplicate in flight: conflict_in_flight", async () => {
    const key = randomUUID();
    const input = { amount: 3, note: "slow", sleepMs: 400 };
    const slow = call(account, key, input);
    await new Promise((r) => setTimeout(r, 100));
    expect(await countedDuring(() => call(account, key, input))).toEqual({ conflict_in_flight: 1 });
    await slow;
  });

  it("a business error is completed; an unexpected one released; its retry a lease_takeover", async () => {
    expect(
      await countedDuring(() => call(account, randomUUID(), { amount: 4, note: "no", fail: "business" })),
    ).toEqual({ claimed: 1, completed: 1 });
    const key = randomUUID();
    expect(
      await countedDuring(() => call(account, key, { amount: 5, note: "flaky", fail: "unexpected" })),
    ).toEqual({ claimed: 1, released: 1 });
    expect(await countedDuring(() => call(account, key, { amount: 5, note: "flaky" }))).toEqual({
      lease_takeover: 1,
      completed: 1,
    });
  });

  it("a stale owner's late completion: fenced", async () => {
    const key = randomUUID();
    const input = { amount: 6, note: "stale" };
    const counted = await countedDuring(async () => {
      let resume!: () => void;
      let paused = false;
      const stalePaused = new Promise<void>((reached) => {
        hooks.beforeComplete = async () => {
          if (paused) return;
          paused = true;
          reached();
          await new Promise<void>((r) => {
            resume = r;
          });
        };
      });
      const stale = call(account, key, input);
      await stalePaused;
      // As in owner.test.ts: the stale owner's heartbeat may renew once before the takeover.
      let takeover: Awaited<ReturnType<typeof call>> | undefined;
      for (let attempt = 0; attempt < 5 && !takeover?.data; attempt++) {
        await db().$executeRaw`UPDATE idempotency_keys SET locked_until = now() - interval '1 second'
          WHERE account_id = ${account.id}::uuid AND key = ${key}`;
        takeover = await call(account, key, input);
      }
      resume();
      expect(takeover?.data).toBeDefined();
      expect((await stale).error?.code).toBe("CONFLICT");
    });
    // A takeover attempt that lost the race to the stale owner's heartbeat adds a 409.
    const raced = counted.conflict_in_flight ? { conflict_in_flight: counted.conflict_in_flight } : {};
    expect(counted).toEqual({ claimed: 1, lease_takeover: 1, completed: 1, fenced: 1, ...raced });
  });
});
