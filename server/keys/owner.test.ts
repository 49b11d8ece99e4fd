import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestCaller, ensureEffectsTable, hooks, runs } from "../test/idempotent-router";
import { keyHistory } from "../test/keys";

type Input = { amount: number; note: string; fail?: "unexpected" };
type Answer = { data?: unknown; error?: TRPCError; headers: Headers };

async function call(procedure: "effect" | "phased", account: TestAccount, key: string, input: Input) {
  const ctx = contextFor(account, { "idempotency-key": key });
  try {
    return { data: await createTestCaller(ctx)[procedure](input), headers: ctx.resHeaders } as Answer;
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    return { error, headers: ctx.resHeaders } as Answer;
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Holds the first `n` attempts that reach the hook: each signals `arrived[i]` and waits for
 * `release[i]`. Later arrivals pass through.
 */
function holdAttempts(n: number) {
  const arrived = Array.from({ length: n }, deferred);
  const release = Array.from({ length: n }, deferred);
  let entered = 0;
  const hook = async () => {
    const i = entered++;
    arrived[i]?.resolve();
    await release[i]?.promise;
  };
  return { arrived, release, hook, entered: () => entered };
}

/**
 * Makes the held owner look dead and lets a duplicate take the key over. The held owner's
 * heartbeat may renew the lease between our UPDATE and the duplicate's claim (a 409), so the
 * lease is ended again until the duplicate is in.
 */
async function takeOver(
  account: TestAccount,
  key: string,
  attempt: () => Promise<Answer>,
  isIn: Promise<void>,
) {
  let answer: Promise<Answer> | undefined;
  for (let i = 0; i < 5; i++) {
    await db().$executeRaw`UPDATE idempotency_keys SET locked_until = now() - interval '1 second'
      WHERE account_id = ${account.id}::uuid AND key = ${key}`;
    answer = attempt();
    const first = await Promise.race([isIn.then(() => "in" as const), answer]);
    if (first === "in" || !first.error) return answer;
  }
  throw new Error("the duplicate never took the key over");
}

const effectsOf = (account: TestAccount, key: string) =>
  db().$queryRaw<{ id: string }[]>`
    SELECT id::text FROM idem_test_effects WHERE account_id = ${account.id}::uuid AND key = ${key}`;
const keyRow = async (account: TestAccount, key: string) => {
  const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
  return { ...row, events: await keyHistory(db(), row.id) };
};
const history = (row: Awaited<ReturnType<typeof keyRow>>) => row.events.map((e) => `${e.kind}@${e.fence}`);

beforeAll(async () => {
  await ensureEffectsTable(db());
});
afterEach(() => {
  hooks.insidePhase = undefined;
  hooks.beforeComplete = undefined;
});

describe("atomic phases", () => {
  it("a taken-over owner's phase rolls back: its business row and its recovery point never commit", async () => {
    const account = await createTestAccount("phase-fence");
    const key = randomUUID();
    const input = { amount: 21, note: "fenced phase" };
    const held = holdAttempts(1);
    hooks.insidePhase = held.hook;

    const stale = call("phased", account, key, input);
    await held.arrived[0]?.promise;
    const takeover = await takeOver(
      account,
      key,
      () => call("phased", account, key, input),
      new Promise(() => {}),
    );
    held.release[0]?.resolve();
    const late = await stale;

    expect(takeover.error).toBeUndefined();
    expect(late.error?.code).toBe("CONFLICT");
    expect(late.headers.get("retry-after")).toBe("1");
    const rows = await effectsOf(account, key);
    expect(rows).toHaveLength(1);
    expect(takeover.data).toEqual({ effectIds: [rows[0]?.id], amount: 21, note: "fenced phase" });
    const row = await keyRow(account, key);
    expect([row.state, row.fence, row.recoveryPoint]).toEqual(["completed", 2, "effect_written"]);
    expect(history(row)).toEqual(["claimed@1", "taken_over@2", "progressed@2", "completed@2", "fenced@1"]);
  });

  it("a retry after an unexpected error resumes from the recovery point and does not redo the phase", async () => {
    const account = await createTestAccount("phase-resume");
    const key = randomUUID();
    const failed = await call("phased", account, key, { amount: 22, note: "resume", fail: "unexpected" });
    expect(failed.error?.code).toBe("INTERNAL_SERVER_ERROR");
    const afterFailure = await keyRow(account, key);
    expect([afterFailure.state, afterFailure.recoveryPoint, afterFailure.lockedUntil]).toEqual([
      "in_progress",
      "effect_written",
      null,
    ]);
    const [written] = await effectsOf(account, key);

    const retry = await call("phased", account, key, { amount: 22, note: "resume" });
    expect(retry.error).toBeUndefined();
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(retry.data).toEqual({ effectIds: [written?.id], amount: 22, note: "resume" });
    expect(runs.get(`${account.id}/${key}`)).toBe(2);
    expect(await effectsOf(account, key)).toHaveLength(1);
    expect(history(await keyRow(account, key))).toEqual([
      "claimed@1",
      "progressed@1",
      "released@1",
      "taken_over@2",
      "completed@2",
    ]);
  });
});

describe("fenced completion", () => {
  it("a stale owner cannot complete while the owner that took over is still working", async () => {
    const account = await createTestAccount("fence-mid");
    const key = randomUUID();
    const input = { amount: 23, note: "both in completion" };
    const held = holdAttempts(2);
    hooks.beforeComplete = held.hook;
    const [staleIn, newIn] = held.arrived;
    const [releaseStale, releaseNew] = held.release;

    const stale = call("effect", account, key, input);
    await staleIn?.promise;
    const takeover = takeOver(
      account,
      key,
      () => call("effect", account, key, input),
      newIn?.promise ?? Promise.resolve(),
    );
    await newIn?.promise;
    // Both sit in their completion transactions; the key is in progress under fence 2.
    releaseStale?.resolve();
    const late = await stale;
    releaseNew?.resolve();
    const won = await await takeover;

    expect(late.error?.code).toBe("CONFLICT");
    expect(won.error).toBeUndefined();
    const effectId = (won.data as { effectId: string }).effectId;
    expect((await effectsOf(account, key)).map((r) => r.id)).toEqual([effectId]);
    const row = await keyRow(account, key);
    expect([row.state, row.fence]).toEqual(["completed", 2]);
    expect(JSON.parse(JSON.stringify(row.responseBody))).toEqual({ data: won.data });
    // By time, as the admin shows it: the completion is stamped with its transaction's start,
    // which opened before the stale owner was fenced (the order of commits was the other way).
    expect(history(row)).toEqual(["claimed@1", "taken_over@2", "completed@2", "fenced@1"]);
  });
});
