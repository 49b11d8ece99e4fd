import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestCaller, ensureEffectsTable, hooks } from "../test/idempotent-router";

async function call(account: TestAccount, key: string, input: { amount: number; note: string }) {
  const ctx = contextFor(account, { "idempotency-key": key });
  try {
    return { ok: true as const, data: await createTestCaller(ctx).admitted(input), headers: ctx.resHeaders };
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    return { ok: false as const, error, headers: ctx.resHeaders };
  }
}

const effectsOf = async (account: TestAccount, key: string) =>
  Number(
    (
      await db().$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM idem_test_effects WHERE account_id = ${account.id}::uuid AND key = ${key}`
    )[0]?.n,
  );

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refusal = () => new TRPCError({ code: "TOO_MANY_REQUESTS", message: "Too many requests." });

let account: TestAccount;
beforeAll(async () => {
  await ensureEffectsTable(db());
  account = await createTestAccount("admit");
});
afterEach(() => {
  hooks.admit = undefined;
});

describe("a refusal while admitting (issue 36, false answer 1)", () => {
  it("is never final once the lease was lost meanwhile: 409 + Retry-After, and the work done by the other attempt replays", async () => {
    const key = randomUUID();
    const input = { amount: 700, note: "slow limiter" };
    let admits = 0;
    let takenOver: Promise<Awaited<ReturnType<typeof call>>> | undefined;
    hooks.admit = async () => {
      admits++;
      if (admits > 1) return; // the retry that takes the key over is admitted
      // The limiter hangs past the lease (1 s); a retry takes the key over and runs the work.
      await sleep(1_300);
      takenOver = call(account, key, input);
      await takenOver;
      throw refusal();
    };
    const first = await call(account, key, input);
    const second = await takenOver;

    expect(second).toMatchObject({ ok: true, data: { amount: 700 } });
    expect(await effectsOf(account, key)).toBe(1);
    // Telling the first caller "refused" would be false: its request was carried out.
    expect(first).toMatchObject({ ok: false, error: { code: "CONFLICT" } });
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const again = await call(account, key, input);
    expect(again).toMatchObject({ ok: true, data: { amount: 700 } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("is final while the claim still holds: 429, nothing done, the key free for a later try", async () => {
    const key = randomUUID();
    const input = { amount: 300, note: "refused" };
    hooks.admit = async () => {
      throw refusal();
    };
    const first = await call(account, key, input);
    expect(first).toMatchObject({ ok: false, error: { code: "TOO_MANY_REQUESTS" } });
    expect(await effectsOf(account, key)).toBe(0);
    hooks.admit = undefined;
    expect(await call(account, key, input)).toMatchObject({ ok: true, data: { amount: 300 } });
    expect(await effectsOf(account, key)).toBe(1);
  });
});
