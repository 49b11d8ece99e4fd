import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startProvider } from "../scripts/lib/provider-process";
import { ensureSchema, LEGACY_SCHEMA } from "./schema";
import { databaseUrl, sdk, visa } from "./test-support";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Gone = no such pid, or a zombie nobody reaped yet (it has exited either way). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return performance.now() - started;
}

/** A database of its own for one test (`name` in pg_stat_activity), dropped afterwards. */
async function withThrowawayDatabase(work: (url: string, admin: pg.Client, name: string) => Promise<void>) {
  const name = `provider_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: databaseUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(databaseUrl());
  url.pathname = `/${name}`;
  try {
    await work(url.toString(), admin, name);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** provider/main.ts as a child process, its output collected as it comes. */
function spawnMain(databaseUrl: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "provider/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PROVIDER_DATABASE_URL: databaseUrl, PROVIDER_PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (t: string) => {
    out.stdout += t;
  });
  child.stderr.setEncoding("utf8").on("data", (t: string) => {
    out.stderr += t;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, out, exited };
}

describe("provider process lifecycle", () => {
  it("prints one ready line and serves /health", async () => {
    const started = performance.now();
    const p = await startProvider({ databaseUrl: databaseUrl() });
    const startupMs = performance.now() - started;
    try {
      expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${p.url}/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      console.info(`[lifecycle] provider ready in ${Math.round(startupMs)} ms`);
    } finally {
      const stopStarted = performance.now();
      await p.stop();
      console.info(`[lifecycle] provider stopped in ${Math.round(performance.now() - stopStarted)} ms`);
    }
  }, 20_000);

  it.each(["SIGTERM", "SIGINT"] as const)(
    "main.ts prints exactly one stdout line and exits 0 on %s",
    async (signal) => {
      const { child, out, exited } = spawnMain(databaseUrl());
      await waitUntil(() => out.stdout.includes("\n"), 15_000);
      child.kill(signal);
      expect(await exited).toBe(0);
      expect(out.stdout).toMatch(/^provider listening on http:\/\/127\.0\.0\.1:\d+\n$/);
      expect(out.stderr).toBe("");
    },
    20_000,
  );

  it("says, on stdout and not as a failure, that the database closed an idle connection", async () => {
    // A database of its own, so that ending its connections touches no other test's provider.
    await withThrowawayDatabase(async (url, admin, name) => {
      const { child, out, exited } = spawnMain(url);
      try {
        await waitUntil(() => out.stdout.includes("\n"), 15_000);
        const baseUrl = /listening on (\S+)/.exec(out.stdout)?.[1] ?? "";
        await sdk(baseUrl).paymentIntents.create(visa, { idempotencyKey: "idle-then-cut" });
        const { rowCount } = await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
          [name],
        );
        expect(rowCount).toBeGreaterThan(0);
        await waitUntil(() => out.stdout.includes("closed an idle connection (57P01)"), 5_000);
        expect(out.stderr).toBe("");
      } finally {
        child.kill("SIGTERM");
        await exited;
      }
    });
  }, 30_000);

  it("several providers starting at once on an EMPTY database all come up (schema creation is serialized)", async () => {
    // A throwaway database, so the schema really is created concurrently from scratch.
    await withThrowawayDatabase(async (url) => {
      // In-process first: eight racing ensureSchema calls overlap far more tightly than process starts.
      const pools = Array.from({ length: 8 }, () => new pg.Pool({ connectionString: url, max: 1 }));
      try {
        await Promise.all(pools.map((pool) => ensureSchema(pool)));
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
      const providers = await Promise.all(
        Array.from({ length: 4 }, () => startProvider({ databaseUrl: url })),
      );
      const pi = await sdk(providers[0]?.url ?? "").paymentIntents.create(visa, {
        idempotencyKey: "fresh-db",
      });
      expect(await sdk(providers[3]?.url ?? "").paymentIntents.retrieve(pi.id)).toEqual(pi);
      await Promise.all(providers.map((p) => p.stop()));
    });
  }, 30_000);

  it("moves the tables of the first wire format (/v1/charges) aside into payment_provider_v1, keeping their rows", async () => {
    await withThrowawayDatabase(async (url) => {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        await db.query(`CREATE SCHEMA payment_provider;
          CREATE TABLE payment_provider.charges (id text PRIMARY KEY, request_fingerprint text NOT NULL);
          CREATE TABLE payment_provider.idempotency_keys (key text PRIMARY KEY);
          INSERT INTO payment_provider.charges VALUES ('ch_old', 'f')`);
        const p = await startProvider({ databaseUrl: url });
        try {
          expect((await sdk(p.url).paymentIntents.create(visa)).status).toBe("succeeded");
        } finally {
          await p.stop();
        }
        expect((await db.query(`SELECT id FROM ${LEGACY_SCHEMA}.charges`)).rows).toEqual([{ id: "ch_old" }]);
        const moved = await db.query(`SELECT to_regclass('${LEGACY_SCHEMA}.idempotency_keys') AS t`);
        expect(moved.rows[0]?.t).not.toBeNull();
      } finally {
        await db.end();
      }
    });
  }, 30_000);

  it("rejects with a message naming the variable when no database is configured", async () => {
    await expect(startProvider({ databaseUrl: "", env: { DATABASE_URL: "" } })).rejects.toThrow(
      /PROVIDER_DATABASE_URL/,
    );
  }, 20_000);

  it("rejects with the child's stderr when the database is unreachable", async () => {
    await expect(
      startProvider({ databaseUrl: "postgresql://postgres@127.0.0.1:1/postgres" }),
    ).rejects.toThrow(/exited before it was ready[\s\S]*ECONNREFUSED/);
  }, 20_000);

  it("the provider dies when its parent is SIGKILLed (no orphans)", async () => {
    const parent = spawn(process.execPath, ["--import", "tsx", "provider/fixtures/provider-parent.ts"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl() },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const info = await new Promise<{ pid: number; url: string }>((resolve, reject) => {
      let out = "";
      parent.stdout?.setEncoding("utf8");
      parent.stdout?.on("data", (text: string) => {
        out += text;
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line) as { pid: number; url: string });
      });
      parent.once("exit", (code) => reject(new Error(`parent exited early (${code})`)));
    });
    expect((await fetch(`${info.url}/health`)).status).toBe(200);
    expect(isGone(info.pid)).toBe(false);

    parent.kill("SIGKILL");
    const goneAfterMs = await waitUntil(() => isGone(info.pid), 5000);
    console.info(`[orphan] provider exited ${Math.round(goneAfterMs)} ms after its parent was SIGKILLed`);
    await expect(fetch(`${info.url}/health`)).rejects.toThrow();
  }, 30_000);

  it("survives PostgreSQL ending its connection in the middle of a slow charge (a database restart)", async () => {
    const url = databaseUrl();
    const p = await startProvider({ databaseUrl: url });
    try {
      // pm_card_slow keeps its transaction open about 2 s, idle between two statements.
      const slow = sdk(p.url)
        .paymentIntents.create(
          { ...visa, payment_method: "pm_card_slow" },
          { idempotencyKey: `k-${randomBytes(6).toString("hex")}` },
        )
        .catch((error: unknown) => error);
      const admin = new pg.Client(url);
      await admin.connect();
      try {
        const terminate = `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`;
        let terminated = 0;
        for (const end = Date.now() + 1500; terminated === 0 && Date.now() < end; ) {
          terminated = (await admin.query<{ n: number }>(terminate)).rows[0]?.n ?? 0;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(terminated).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
      await slow;
      await new Promise((r) => setTimeout(r, 500));
      expect(isGone(p.pid)).toBe(false);
      expect((await fetch(`${p.url}/health`)).status).toBe(200);
    } finally {
      await p.stop();
    }
  });
});
