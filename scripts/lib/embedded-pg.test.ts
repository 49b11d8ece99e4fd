// Real processes, no mocks: every test starts actual PostgreSQL servers in temporary roots.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type Database, startDatabase } from "./embedded-pg";
import { freePort } from "./guarded-process";

const MODULE = fileURLToPath(new URL("./embedded-pg.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const isRoot = process.getuid?.() === 0;
const T = 30_000;

const cleanups: (() => unknown)[] = [];
let savedUrl: string | undefined;
beforeAll(() => {
  savedUrl = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL; // these tests are about the embedded server
});
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});
afterAll(() => {
  if (savedUrl !== undefined) process.env.DATABASE_URL = savedUrl;
});

/** A project-like root; as root it must be traversable by the postgres user (mkdtemp makes 0700). */
function makeRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), "embedded-pg-test-"));
  chmodSync(dir, 0o755);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(opts: Parameters<typeof startDatabase>[0]): Promise<Database> {
  const db = await startDatabase(opts);
  cleanups.push(() => db.stop());
  return db;
}

async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

const dataDirOf = async (url: string) =>
  (await query<{ d: string }>(url, "select current_setting('data_directory') as d"))[0]?.d;

/** PIDs of live processes working in `dataDir` (every postgres process chdirs into it). */
function serverPids(dataDir: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === dataDir;
      } catch {
        return false; // gone, a zombie, or not ours to see
      }
    })
    .map(Number);
}

const postmasterPid = (dataDir: string) =>
  Number.parseInt(readFileSync(join(dataDir, "postmaster.pid"), "utf8"), 10);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Runs `code` (an ES module that may import "pg" and MODULE) in a fresh Node with tsx. */
function node(code: string, prefix: string[] = []): ChildProcess {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const [cmd = process.execPath, ...args] = [...prefix, process.execPath];
  return spawn(cmd, [...args, "--import", "tsx", "--input-type=module", "-e", code], {
    cwd: REPO,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A Node child running `code`, once it has printed READY; it then idles until signalled. */
async function readyChild(code: string) {
  const child = node(`${code}\nconsole.log("READY");\nsetInterval(() => {}, 1000);`);
  const { out, exit } = collect(child);
  cleanups.push(() => child.kill("SIGKILL"));
  await vi.waitFor(() => expect(out()).toContain("READY"), { timeout: 20_000, interval: 50 });
  return { child, out, exit };
}

function collect(child: ChildProcess): { out: () => string; exit: Promise<number | null> } {
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    out += chunk;
  });
  return { out: () => out, exit: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
}

describe("startDatabase (embedded)", () => {
  it("starts fresh, answers queries, and keeps data across a restart", { timeout: T }, async () => {
    const root = makeRoot();
    const port = await freePort();
    let t = performance.now();
    const first = await startDatabase({ instance: "test", root, port, databases: ["checkout", "other"] });
    const coldMs = performance.now() - t;
    try {
      expect(first).toMatchObject({
        url: `postgresql://postgres:postgres@127.0.0.1:${port}/checkout`,
        embedded: true,
      });
      expect(await query(first.url, "select 1 as one")).toEqual([{ one: 1 }]);
      expect(await dataDirOf(first.url)).toBe(join(root, ".data", "pg-test")); // no fallback here
      const names = await query<{ datname: string }>(first.url, "select datname from pg_database");
      expect(names.map((r) => r.datname)).toEqual(expect.arrayContaining(["checkout", "other"]));
      await query(first.url, "create table kept (v text); insert into kept values ('still here')");
    } finally {
      await first.stop();
    }
    await expect(query(first.url, "select 1")).rejects.toThrow(); // really stopped

    t = performance.now();
    const again = await start({ instance: "test", root, port });
    const warmMs = performance.now() - t;
    expect(await query(again.url, "select v from kept")).toEqual([{ v: "still here" }]);
    console.log(`[timing] initdb+start ${coldMs.toFixed(0)} ms, warm restart ${warmMs.toFixed(0)} ms`);
  });

  it("recovers from a SIGKILLed owner: stops the orphan postgres and owns the new one", {
    timeout: T,
  }, async () => {
    const root = makeRoot();
    const port = await freePort();
    const dataDir = join(root, ".data", "pg-test");
    const { child, exit } = await readyChild(`
      import pg from "pg";
      const { startDatabase } = await import(${JSON.stringify(MODULE)});
      const db = await startDatabase({ instance: "test", root: ${JSON.stringify(root)}, port: ${port} });
      const client = new pg.Client(db.url);
      await client.connect();
      await client.query("create table survived (n int); insert into survived values (42)");
      await client.end();
    `);
    const orphan = postmasterPid(dataDir);
    cleanups.push(() => alive(orphan) && process.kill(orphan, "SIGINT")); // should the test fail
    child.kill("SIGKILL");
    await exit;
    expect(alive(orphan)).toBe(true); // the orphan the test is about
    expect(serverPids(dataDir)).toContain(orphan);

    const db = await startDatabase({ instance: "test", root, port });
    try {
      expect(await query(db.url, "select n from survived")).toEqual([{ n: 42 }]);
      const pids = serverPids(dataDir);
      expect(pids).not.toContain(orphan);
      expect(pids).toContain(postmasterPid(dataDir));
    } finally {
      await db.stop();
    }
    expect(serverPids(dataDir)).toEqual([]);
  });

  it("ignores a stale postmaster.pid (dead PID, or a PID reused by another process)", {
    timeout: T,
  }, async () => {
    const root = makeRoot();
    const port = await freePort();
    const dataDir = join(root, ".data", "pg-test");
    const db = await startDatabase({ instance: "test", root, port });
    const pidFile = readFileSync(join(dataDir, "postmaster.pid"), "utf8");
    await db.stop();
    const withPid = (pid: number) =>
      writeFileSync(join(dataDir, "postmaster.pid"), pidFile.replace(/^\d+/, String(pid)));

    const dead = spawnSync("true").pid;
    expect(alive(dead)).toBe(false);
    withPid(dead);
    await (await startDatabase({ instance: "test", root, port })).stop();

    // A live process of the server's own user: postgres itself would refuse this pid file.
    const owner = statSync(dataDir);
    const sleeper = spawn("sleep", ["60"], { uid: owner.uid, gid: owner.gid, stdio: "ignore" });
    cleanups.push(() => sleeper.kill("SIGKILL"));
    if (sleeper.pid === undefined) throw new Error("could not spawn sleep");
    withPid(sleeper.pid);
    const again = await start({ instance: "test", root, port });
    expect(await query(again.url, "select 1 as one")).toEqual([{ one: 1 }]);
    expect(sleeper.exitCode).toBe(null); // left alone
    expect(sleeper.signalCode).toBe(null);
  });

  it("stopOnExit: SIGTERM stops the server and exits with 143", { timeout: T }, async () => {
    const root = makeRoot();
    const port = await freePort();
    const dataDir = join(root, ".data", "pg-test");
    const { child, out, exit } = await readyChild(`
      const { startDatabase, stopOnExit } = await import(${JSON.stringify(MODULE)});
      stopOnExit(await startDatabase({ instance: "test", root: ${JSON.stringify(root)}, port: ${port} }));
    `);
    const server = postmasterPid(dataDir);
    cleanups.push(() => alive(server) && process.kill(server, "SIGINT")); // should the test fail
    child.kill("SIGTERM");
    expect(await exit, out()).toBe(143);
    expect(serverPids(dataDir)).toEqual([]);
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(false); // a clean shutdown
  });

  it("the package's own signal handler leaves the server alone: its owner stops it, in order", {
    timeout: T,
  }, async () => {
    const root = makeRoot();
    const port = await freePort();
    const { child, out, exit } = await readyChild(`
      const pg = (await import("pg")).default;
      const { startDatabase } = await import(${JSON.stringify(MODULE)});
      const db = await startDatabase({ instance: "test", root: ${JSON.stringify(root)}, port: ${port} });
      process.on("SIGTERM", async () => {
        await new Promise((r) => setTimeout(r, 500)); // a server finishing its requests
        const client = new pg.Client(db.url);
        await client.connect();
        const { rows } = await client.query("select 1 as one");
        await client.end();
        console.log("STILL UP " + rows[0].one);
        await db.stop();
        process.exit(0);
      });
    `);
    child.kill("SIGTERM");
    expect(await exit, out()).toBe(0);
    expect(out()).toContain("STILL UP 1");
    expect(serverPids(join(root, ".data", "pg-test"))).toEqual([]);
  });

  it("reports a busy port with the server log", { timeout: T }, async () => {
    const root = makeRoot();
    const port = await freePort();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      await expect(startDatabase({ instance: "test", root, port })).rejects.toThrow(/Address already in use/);
      expect(existsSync(join(root, ".data", "pg-test.log"))).toBe(true);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    const db = await start({ instance: "test", root, port }); // and works once the port is free
    expect(await query(db.url, "select 1 as one")).toEqual([{ one: 1 }]);
  });

  it.skipIf(!isRoot)(
    `as root, falls back to the temp dir when the postgres user cannot reach the project${isRoot ? "" : " (skipped: needs root)"}`,
    { timeout: T },
    async () => {
      const locked = mkdtempSync(join(tmpdir(), "embedded-pg-locked-")); // mkdtemp: 0700, like /root
      cleanups.push(() => rmSync(locked, { recursive: true, force: true }));
      expect(statSync(locked).mode & 0o777).toBe(0o700);
      const root = join(locked, "project");
      mkdirSync(root, { mode: 0o755 });
      const port = await freePort();
      const logged = vi.spyOn(console, "log");
      cleanups.push(() => logged.mockRestore());

      const db = await startDatabase({ instance: "test", root, port });
      let dataDir: string | undefined;
      try {
        dataDir = await dataDirOf(db.url);
        expect(dataDir).toMatch(new RegExp(`^${tmpdir()}/idempotent-checkout-[0-9a-f]+/pg-test$`));
        await query(db.url, "create table t (v int); insert into t values (7)");
      } finally {
        await db.stop();
      }
      if (!dataDir) throw new Error("no data directory");
      const fallback = dirname(dataDir);
      cleanups.push(() => rmSync(fallback, { recursive: true, force: true }));
      expect(logged.mock.calls.flat().join("\n")).toContain(fallback);
      expect(existsSync(join(root, ".data", "pg-test", "PG_VERSION"))).toBe(false);

      const again = await start({ instance: "test", root, port }); // same folder next time
      expect(await query(again.url, "select v from t")).toEqual([{ v: 7 }]);
    },
  );

  const switchUser = ["runuser", "setpriv"].find((cmd) => spawnSync("which", [cmd]).status === 0);
  // A checkout under /root (0700) cannot be run by another user at all: nothing to test then.
  const nobodyReachesRepo =
    isRoot &&
    spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", join(REPO, "package.json")]).status === 0;
  it.skipIf(!isRoot || !switchUser || !nobodyReachesRepo)(
    `works for an unprivileged user started by root${
      !isRoot
        ? " (skipped: not root, so the other tests already run unprivileged)"
        : !switchUser
          ? " (skipped: no runuser or setpriv)"
          : !nobodyReachesRepo
            ? " (skipped: this checkout is not readable by other users, e.g. under /root)"
            : ""
    }`,
    { timeout: T },
    async () => {
      const nobody = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }));
      const nogroup = Number(execFileSync("id", ["-g", "nobody"], { encoding: "utf8" }));
      const root = mkdtempSync(join(tmpdir(), "embedded-pg-nobody-"));
      cleanups.push(() => rmSync(root, { recursive: true, force: true }));
      chownSync(root, nobody, nogroup);
      const port = await freePort();
      const prefix =
        switchUser === "runuser"
          ? ["runuser", "-u", "nobody", "--"]
          : ["setpriv", `--reuid=${nobody}`, `--regid=${nogroup}`, "--clear-groups", "--"];
      const child = node(
        `
        import pg from "pg";
        const { startDatabase } = await import(${JSON.stringify(MODULE)});
        for (const round of [1, 2]) {
          const db = await startDatabase({ instance: "test", root: ${JSON.stringify(root)}, port: ${port} });
          const client = new pg.Client(db.url);
          await client.connect();
          if (round === 1) await client.query("create table t (v int); insert into t values (1)");
          const { rows } = await client.query("select current_setting('data_directory') as dir, (select v from t) as v");
          await client.end();
          await db.stop();
          console.log("RESULT " + JSON.stringify({ uid: process.getuid(), ...rows[0] }));
        }
      `,
        prefix,
      );
      cleanups.push(() => child.kill("SIGKILL"));
      const { out, exit } = collect(child);
      expect(await exit, out()).toBe(0);
      const dataDir = join(root, ".data", "pg-test");
      const results = out()
        .split("\n")
        .filter((line) => line.startsWith("RESULT "))
        .map((line) => JSON.parse(line.slice(7)));
      expect(results).toEqual([
        { uid: nobody, dir: dataDir, v: 1 },
        { uid: nobody, dir: dataDir, v: 1 },
      ]);
      expect(statSync(join(dataDir, "PG_VERSION")).uid).toBe(nobody);
      expect(serverPids(dataDir)).toEqual([]);
    },
  );

  it("with DATABASE_URL set, starts nothing and returns it unchanged", { timeout: T }, async () => {
    const root = makeRoot();
    const url = "postgresql://someone:secret@db.example.invalid:6543/checkout?sslmode=require";
    process.env.DATABASE_URL = url;
    cleanups.push(() => {
      delete process.env.DATABASE_URL;
    });
    const port = await freePort();
    const db = await startDatabase({ instance: "test", root, port });
    expect(db.url).toBe(url);
    expect(db.embedded).toBe(false);
    await db.stop();
    expect(existsSync(join(root, ".data"))).toBe(false);
    await expect(
      query(`postgresql://postgres:postgres@127.0.0.1:${port}/postgres`, "select 1"),
    ).rejects.toThrow(/ECONNREFUSED/);
  });
});
