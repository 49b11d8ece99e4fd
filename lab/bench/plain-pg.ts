/**
 * Fresh payments ×1 through the API tier on the embedded PostgreSQL (as `bench:http` runs it) and
 * on a plain PostgreSQL server (PLAIN_PG_URL, Debian's 15 by default, the provider's store there
 * too), alternately, so that the shared machine's drift falls on both (issue 43, docs/benchmarks.md).
 * PLAIN_PG_LOG=<the plain server's log file> adds one logged load per variant: each server's own
 * time per payment, by statement. PLAIN_PG_VARIANTS (A,Boff,Bon,Bnojit), PLAIN_PG_ROUNDS,
 * PLAIN_PG_PAYMENTS, PLAIN_PG_PORTBASE, PLAIN_PG_PREFIX (its databases) tune it.
 *   PLAIN_PG_LOG=/var/log/postgresql/postgresql-15-main.log node --import tsx lab/bench/plain-pg.ts
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startDatabase } from "../../scripts/lib/embedded-pg";
import { startProvider } from "../../scripts/lib/provider-process";
import { closedLoop, httpClient, percentile } from "./lib/load";
import { benchOrders } from "./lib/orders";
import { cpuDelta, cpuMs } from "./lib/proc";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PORT = Number(process.env.PLAIN_PG_PORTBASE ?? 6500);
const PAYMENTS = Number(process.env.PLAIN_PG_PAYMENTS ?? 300);
const ROUNDS = Number(process.env.PLAIN_PG_ROUNDS ?? 2);
const PLAIN = process.env.PLAIN_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const PREFIX = process.env.PLAIN_PG_PREFIX ?? "ic_plainpg";
delete process.env.DATABASE_URL; // startDatabase would hand it back instead of an embedded server

const root = `/tmp/${PREFIX}`;
const embedded = await startDatabase({ instance: "test", root, port: PORT + 50, databases: ["checkout"] });
const embeddedProvider = await startDatabase({
  instance: "provider",
  root,
  port: PORT + 51,
  databases: ["provider"],
});
const at = (server: string, db: string) => Object.assign(new URL(server), { pathname: `/${db}` }).toString();
interface Target {
  name: string;
  app: string;
  provider: string;
  prepared: "on" | "off";
  logs: string[];
  jit: "on" | "off";
}
const plainApp = at(PLAIN, `${PREFIX}_checkout`);
const plainProvider = at(PLAIN, `${PREFIX}_provider`);
const A: Target = {
  name: "embedded 18",
  app: embedded.url,
  provider: embeddedProvider.url,
  prepared: "on",
  logs: [`${root}/.data/pg-test.log`, `${root}/.data/pg-provider.log`],
  jit: "on",
};
const B = (prepared: "on" | "off", jit: "on" | "off" = "on"): Target => ({
  name: `plain 15, prepared ${prepared}${jit === "off" ? ", jit off" : ""}`,
  app: plainApp,
  provider: plainProvider,
  prepared,
  logs: process.env.PLAIN_PG_LOG ? [process.env.PLAIN_PG_LOG] : [],
  jit,
});

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}
for (const [server, db] of [
  [embedded.url, "checkout"],
  [embeddedProvider.url, "provider"],
  [PLAIN, `${PREFIX}_checkout`],
  [PLAIN, `${PREFIX}_provider`],
] as const) {
  await sql(at(server, "postgres"), `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  await sql(at(server, "postgres"), `CREATE DATABASE "${db}"`);
}
process.env.DATABASE_URL = embedded.url; // the app's modules read the environment on import
const { applyMigrations } = await import("../../server/db/migrate");
const { closeClient, createPrismaClient, newId } = await import("../../server/db");
const { seedDemoData } = await import("../../server/seed");
for (const url of [embedded.url, plainApp]) {
  await applyMigrations(url);
  const prisma = createPrismaClient(url);
  await seedDemoData(prisma, { production: false });
  await closeClient(prisma);
}

async function orders(url: string, n: number): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const account = (await c.query("SELECT id FROM accounts WHERE handle = 'alice'")).rows[0].id;
    return await benchOrders(c, account, n, newId);
  } finally {
    await c.end();
  }
}

/** The API tier as `npm run start:api` runs it against this target, with its own provider. */
async function startApi(
  t: Target,
): Promise<{ child: ChildProcess; provider: number; stop(): Promise<void> }> {
  const provider = await startProvider({ databaseUrl: t.provider });
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/api.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: t.app,
      DATABASE_PREPARED_STATEMENTS: t.prepared,
      PAYMENT_PROVIDER_URL: provider.url,
      PORT: String(PORT + 10),
      HOSTNAME: "127.0.0.1",
      APP_ENV: "development",
      LOG_FORMAT: "json",
      RATE_LIMIT_PAYMENTS_PER_MINUTE: "1000000",
      RATE_LIMIT_ORDERS_PER_MINUTE: "1000000",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const stop = async () => {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    await provider.stop();
  };
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`http://127.0.0.1:${PORT + 10}/api/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { child, provider: provider.pid, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error("the API tier did not answer");
}

/**
 * CPU ms so far of the API process, the provider's, and the PostgreSQL backends of these databases
 * (pooled, so they live through a load): on this shared machine wall time is mostly waiting for a core.
 */
async function backendCpu(dbs: string[], api: { child: ChildProcess; provider: number }) {
  const pg = new Map<number, number>();
  for (const url of dbs) {
    const q =
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()";
    for (const row of (await sql(url, q)).rows)
      for (const [pid, ms] of cpuMs(row.pid as number)) pg.set(pid, ms);
  }
  return { api: cpuMs(api.child.pid as number), provider: cpuMs(api.provider), pg };
}

/** `duration: X ms ...` entries the server logged since `from`, summed by statement, ms per payment. */
function serverTime(file: string, from: number, payments: number, out: Map<string, number>): void {
  const entries = readFileSync(file, "utf8")
    .slice(from)
    .split(/\n(?=\d{4}-\d\d-\d\d )/);
  for (const e of entries) {
    const m = /(?:@(\S*) )?LOG: {2}duration: ([\d.]+) ms {2}(\w+)[^:]*: ([\s\S]*)/.exec(e);
    if (!m) continue;
    const text = (m[4] as string).split("\nDETAIL")[0]?.replace(/\s+/g, " ").trim().slice(0, 110);
    const key = `${m[1] ?? file.split("/").pop()} ${m[3]} ${text}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]) / payments);
  }
}

async function run(t: Target, logged: boolean) {
  const dbs = t.app === embedded.url ? [embedded.url, embeddedProvider.url] : [plainApp, plainProvider];
  const setting = logged ? "0" : "-1";
  for (const url of dbs) {
    const db = `"${new URL(url).pathname.slice(1)}"`;
    await sql(url, `ALTER DATABASE ${db} SET log_min_duration_statement = ${setting}`);
    await sql(url, `ALTER DATABASE ${db} SET jit = ${t.jit}`);
    // PLAIN_PG_EXPLAIN=1: every plan in the log too (auto_explain), to read their costs against jit_above_cost.
    const explain = logged && process.env.PLAIN_PG_EXPLAIN === "1";
    await sql(
      url,
      explain
        ? `ALTER DATABASE ${db} SET session_preload_libraries = 'auto_explain'`
        : `ALTER DATABASE ${db} RESET session_preload_libraries`,
    );
    await sql(url, `ALTER DATABASE ${db} SET auto_explain.log_min_duration = ${explain ? 0 : -1}`);
  }
  const api = await startApi(t);
  const client = httpClient(`http://127.0.0.1:${PORT + 10}`, 2);
  const pay = (id: string) =>
    client.request(
      "POST",
      "/api/trpc/payments.create",
      { authorization: "Bearer sk_test_alice", "idempotency-key": randomUUID() },
      JSON.stringify({ orderId: id, paymentMethod: "pm_card_visa" }),
    );
  try {
    for (const id of await orders(t.app, 50)) await pay(id);
    const ids = await orders(t.app, PAYMENTS);
    const logFrom = t.logs.map((f) => statSync(f).size);
    const before = await backendCpu(dbs, api);
    const r = await closedLoop(1, ids.length, async (k) => (await pay(ids[k] as string)).status === 200);
    const after = await backendCpu(dbs, api);
    const per = (k: keyof typeof after) => (cpuDelta(before[k], after[k]) / ids.length).toFixed(2);
    const line = `${t.name}${logged ? " (logging every statement)" : ""}: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.perSecond.toFixed(0)}/s, unexpected ${r.unexpected}; CPU ms per payment: API ${per("api")}, provider ${per("provider")}, PostgreSQL backends ${per("pg")}`;
    console.log(line);
    if (logged) {
      await new Promise((r) => setTimeout(r, 500));
      const byStatement = new Map<string, number>();
      for (const [i, f] of t.logs.entries()) serverTime(f, logFrom[i] as number, PAYMENTS, byStatement);
      const time = [...byStatement].sort((a, b) => b[1] - a[1]);
      const total = time.reduce((s, [, ms]) => s + ms, 0);
      const phases = new Map<string, number>();
      for (const [k, ms] of time) {
        const [db, phase] = k.split(" ");
        const key = `${db?.replace(/^ic_\S*_|^pg-|\.log$/g, "")} ${phase}`;
        phases.set(key, (phases.get(key) ?? 0) + ms);
      }
      const byPhase = [...phases].map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(", ");
      console.log(
        `  server time per payment ${total.toFixed(2)} ms (${byPhase}); top statements (ms per payment):`,
      );
      for (const [k, ms] of time.slice(0, 25)) console.log(`  ${ms.toFixed(3)}  ${k}`);
    }
    return r.p50;
  } finally {
    client.close();
    await api.stop();
  }
}

/** Round trip of `SELECT 1` and of a one-row INSERT committed alone (the WAL flush), p50 in ms. */
async function roundTrips(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const time = async (text: string) => {
    const xs: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      await c.query(text);
      xs.push(performance.now() - t0);
    }
    return percentile(xs, 0.5).toFixed(3);
  };
  try {
    await c.query("CREATE TABLE IF NOT EXISTS plain_pg_commits (id bigserial PRIMARY KEY, at timestamptz)");
    const one = await time("SELECT 1");
    const commit = await time("INSERT INTO plain_pg_commits (at) VALUES (now())");
    await c.query("DROP TABLE plain_pg_commits");
    const settings = await c.query(
      `SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) AS s FROM pg_settings WHERE name IN
       ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'jit', 'shared_buffers',
        'autovacuum', 'full_page_writes', 'wal_level', 'checkpoint_timeout', 'max_wal_size', 'commit_delay')`,
    );
    return `SELECT 1 ${one} ms, INSERT+COMMIT ${commit} ms; ${settings.rows[0].s}`;
  } finally {
    await c.end();
  }
}

const variants = (process.env.PLAIN_PG_VARIANTS ?? "A,Boff,Bon").split(",");
const targets: Record<string, Target> = { A, Boff: B("off"), Bon: B("on"), Bnojit: B("off", "off") };
const p50s: Record<string, number[]> = {};
for (let round = 1; round <= ROUNDS; round++)
  for (const v of variants) {
    const t = targets[v] as Target;
    p50s[t.name] = [...(p50s[t.name] ?? []), await run(t, false)];
  }
if (process.env.PLAIN_PG_LOG !== undefined) for (const v of variants) await run(targets[v] as Target, true);
console.log("\nround trips:");
for (const [name, url] of [
  ["embedded 18", embedded.url],
  ["plain 15", plainApp],
])
  console.log(`  ${name}: ${await roundTrips(url as string)}`);
console.log("\np50 by round:", JSON.stringify(p50s));
if (process.env.PLAIN_PG_KEEP !== "1")
  for (const db of [`${PREFIX}_checkout`, `${PREFIX}_provider`])
    await sql(at(PLAIN, "postgres"), `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
await embedded.stop();
await embeddedProvider.stop();
