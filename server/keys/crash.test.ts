import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../db";
import { contextFor, createTestAccount } from "../test/fixtures";
import { createTestCaller, ensureEffectsTable, runs } from "../test/idempotent-router";
import { counters, keyHistory } from "../test/keys";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = "server/test/crash-in-completion.ts";

async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The child's connections, found by the application name it was given. */
async function backendsOf(applicationName: string) {
  return db().$queryRaw<{ state: string | null }[]>`
    SELECT state FROM pg_stat_activity WHERE application_name = ${applicationName}`;
}

const ms = (since: number) => `${Math.round(performance.now() - since)} ms`;
const timings: string[] = [];

beforeAll(async () => {
  await ensureEffectsTable(db());
});

describe("a process killed inside the business transaction", () => {
  it("leaves neither the business row nor the completion, and the retry after the lease runs once", async () => {
    const account = await createTestAccount("crash");
    const key = randomUUID();
    const input = { amount: 1234, note: "killed mid-transaction" };
    const applicationName = `idem-crash-${randomBytes(4).toString("hex")}`;
    const url = new URL(process.env.DATABASE_URL ?? "");
    url.searchParams.set("application_name", applicationName);

    const child = spawn(
      process.execPath,
      ["--import", "tsx", CHILD, JSON.stringify({ account, key, input })],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: url.toString() },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => {
      stdout += t;
    });
    child.stderr.setEncoding("utf8").on("data", (t: string) => {
      stderr += t;
    });
    const t0 = performance.now();
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_c, s) => resolve(s)));
    try {
      await waitUntil(
        "the child reached its completion transaction",
        () => stdout.includes("\n") || child.exitCode !== null,
        20_000,
      );
      expect({ stdout, stderr }).toEqual({ stdout: "inside transaction\n", stderr: "" });
      timings.push(`child in its transaction after ${ms(t0)}`);
      // The business row is written and the transaction open: that is where the power goes.
      expect((await backendsOf(applicationName)).map((b) => b.state)).toContain("idle in transaction");
    } finally {
      child.kill("SIGKILL");
    }
    expect(await exited).toBe("SIGKILL");
    expect(stderr).toBe("");
    // Postgres rolls back a dead client's transaction once it sees the connection close.
    await waitUntil(
      "the child's connections closed",
      async () => (await backendsOf(applicationName)).length === 0,
      5000,
    );

    const effects = () =>
      db().$queryRaw<{ id: string }[]>`
        SELECT id::text FROM idem_test_effects WHERE account_id = ${account.id}::uuid AND key = ${key}`;
    const keyRow = async () => {
      const row = await db().idempotencyKey.findFirstOrThrow({ where: { accountId: account.id, key } });
      return { ...row, events: await keyHistory(db(), row.id) };
    };
    timings.push(`killed and its connection gone at ${ms(t0)}`);
    expect(await effects()).toEqual([]);
    const orphan = await keyRow();
    expect([orphan.state, orphan.responseStatus, orphan.responseBody, orphan.completedAt]).toEqual([
      "in_progress",
      null,
      null,
      null,
    ]);
    expect(orphan.events.map((e) => e.kind)).toEqual(["claimed"]);

    const retry = async () => {
      const ctx = contextFor(account, { "idempotency-key": key });
      try {
        return { data: await createTestCaller(ctx).effect(input), headers: ctx.resHeaders };
      } catch (error) {
        if (!(error instanceof TRPCError)) throw error;
        return { error, headers: ctx.resHeaders };
      }
    };
    // Until the dead owner's lease runs out, a retry is told to wait, not let in.
    const early = await retry();
    expect(early.error?.code).toBe("CONFLICT");
    expect(early.headers.get("retry-after")).toBe("1");
    expect(runs.get(`${account.id}/${key}`)).toBeUndefined();

    await waitUntil(
      "the lease ran out",
      async () =>
        (
          await db().$queryRaw<{ over: boolean }[]>`
            SELECT locked_until <= now() AS over FROM idempotency_keys WHERE id = ${orphan.id}`
        )[0]?.over === true,
      5000,
    );
    timings.push(`lease over at ${ms(t0)}`);
    const takeoversBefore = counters.processTotals().lease_takeover;
    const resumed = await retry();
    expect(resumed.error).toBeUndefined();
    expect(resumed.headers.get("idempotent-replayed")).toBeNull();
    expect(runs.get(`${account.id}/${key}`)).toBe(1);
    expect(counters.processTotals().lease_takeover).toBe(takeoversBefore + 1);

    const rows = await effects();
    expect(rows).toHaveLength(1);
    expect(resumed.data).toMatchObject({ effectId: rows[0]?.id, amount: 1234 });
    const done = await keyRow();
    expect([done.state, done.responseStatus, done.fence, done.attempts]).toEqual(["completed", 200, 2, 2]);
    expect(done.events.map((e) => `${e.kind}@${e.fence}`)).toEqual([
      "claimed@1",
      "taken_over@2",
      "completed@2",
    ]);

    const replay = await retry();
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.stringify(replay.data)).toBe(JSON.stringify(resumed.data));
    expect(runs.get(`${account.id}/${key}`)).toBe(1);
    console.info(`[crash] ${timings.join(", ")}`);
  }, 40_000);
});
