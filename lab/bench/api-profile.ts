/**
 * `npm run bench:api-profile`: the API tier alone, where its CPU per fresh payment goes.
 * Runs the tier's server as the source (`tsx scripts/api.ts`) and as the bundle a deployment runs
 * (`node dist/api.mjs`, after `npm run build`), passes interleaved, each with fresh payments ×16 on
 * the embedded PostgreSQL and the provider process; prints CPU ms per payment per process, and
 * with BENCH_CPU_PROF=1 the bundle's V8 profile summed by self time (by package and by function).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startDatabase } from "../../scripts/lib/embedded-pg";
import { startProvider } from "../../scripts/lib/provider-process";
import { closedLoop, httpClient } from "./lib/load";
import { benchOrders } from "./lib/orders";
import { cpuDelta, cpuMs } from "./lib/proc";
import { profilerClock, summarizeProfile } from "./lib/profile";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PORT = Number(process.env.BENCH_PORT ?? 3325);
const PASSES = Number(process.env.BENCH_PASSES ?? 3);
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 600);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const PROFILE = process.env.BENCH_CPU_PROF === "1";

const database = await startDatabase({
  instance: "test",
  root: join(ROOT, ".data", "api-profile"),
  databases: ["checkout"],
  port: 54379,
});
const providerDatabase = await startDatabase({
  instance: "provider",
  root: join(ROOT, ".data", "api-profile"),
  databases: ["provider"],
  port: 54380,
});
process.env.DATABASE_URL = database.url;
const { applyMigrations } = await import("../../server/db/migrate");
await applyMigrations(database.url);
const { closeClient, createPrismaClient, newId } = await import("../../server/db");
const { seedDemoData } = await import("../../server/seed");
const seeding = createPrismaClient(database.url);
await seedDemoData(seeding, { production: false });
await closeClient(seeding);
const admin = new pg.Pool({ connectionString: database.url, max: 2 });
const accountId = (await admin.query("SELECT id FROM accounts WHERE handle = 'alice'")).rows[0].id as string;
const provider = await startProvider({ databaseUrl: providerDatabase.url });
const postmaster = Number(
  (await admin.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")).rows[0].pid,
);
const postmasterPid = Number(readFileSync(`/proc/${postmaster}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);

const orders = (n: number) => benchOrders(admin, accountId, n, newId);

// BENCH_API_FLAGS (e.g. `--max-semi-space-size=64`) adds the bundle run with those node flags.
const flags = (process.env.BENCH_API_FLAGS ?? "").split(" ").filter(Boolean);
type Variant = string;
const bundled = existsSync(join(ROOT, "dist", "api.mjs"));
if (!bundled) console.log("dist/api.mjs is missing (run `npm run build`): the source only");
const variants: Variant[] = [
  // The same round trips from a bare node:http server (lab/bench/skeleton-server.mjs): the floor.
  "skeleton",
  "source",
  ...(bundled ? ["bundle"] : []),
  ...(bundled && flags.length > 0 ? [`bundle ${flags.join(" ")}`] : []),
];

async function start(variant: Variant, profileDir?: string): Promise<ChildProcess> {
  const entry =
    variant === "skeleton"
      ? ["lab/bench/skeleton-server.mjs"]
      : variant === "source"
        ? ["--import", "tsx", "scripts/api.ts"]
        : [...(variant === "bundle" ? [] : flags), "dist/api.mjs"];
  const child = spawn(
    process.execPath,
    [...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), ...entry],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        DATABASE_PREPARED_STATEMENTS: "on",
        PAYMENT_PROVIDER_URL: provider.url,
        APP_ENV: "development",
        LOG_FORMAT: "json",
        RATE_LIMIT_PAYMENTS_PER_MINUTE: "1000000",
        PORT: String(PORT),
        HOSTNAME: "127.0.0.1",
        BACKGROUND_JOBS: "off",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`http://127.0.0.1:${PORT}/api/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the API tier (${variant}) did not answer`);
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

const client = httpClient(`http://127.0.0.1:${PORT}`, 40);
const pay = (orderId: string) =>
  client.request(
    "POST",
    "/api/trpc/payments.create",
    { authorization: "Bearer sk_test_alice", "idempotency-key": randomUUID() },
    JSON.stringify({ orderId, paymentMethod: "pm_card_visa" }),
  );
async function fresh(n: number) {
  const ids = await orders(n);
  return closedLoop(CLIENTS, ids.length, async (k) => (await pay(ids[k] as string)).status === 200);
}

/**
 * A process's CPU ms on its main thread (user, system) and on its other threads (V8's compiler
 * and GC helpers, libuv's pool), and its context switches (waiting, preempted), from /proc.
 */
function split(pid: number) {
  const ticks = (path: string) => {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) * 10, sys: Number(fields[12]) * 10 };
  };
  const whole = ticks(`/proc/${pid}/stat`);
  const main = ticks(`/proc/${pid}/task/${pid}/stat`);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const count = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return {
    user: main.user,
    sys: main.sys,
    helpers: whole.user + whole.sys - main.user - main.sys,
    voluntary: count("voluntary_ctxt_switches"),
    forced: count("nonvoluntary_ctxt_switches"),
  };
}

const rows: {
  variant: Variant;
  perSecond: number;
  p50: number;
  api: number;
  pg: number;
  provider: number;
}[] = [];
const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), "api-profile-")) : undefined;
const windows = new Map<string, [number, number]>();
for (let pass = 1; pass <= PASSES; pass++)
  for (const variant of variants) {
    // The last pass of the bundle and of the skeleton is profiled (a profile slows the process it watches).
    const profiled =
      profileDir && pass === PASSES && (variant === "bundle" || variant === "skeleton")
        ? join(profileDir, variant)
        : undefined;
    const server = await start(variant, profiled);
    await fresh(200); // warm: JIT, the pool's connections
    const before = {
      api: cpuMs(server.pid as number),
      pg: cpuMs(postmasterPid),
      provider: cpuMs(provider.pid),
    };
    const ids = await orders(PAYMENTS);
    const splitBefore = split(server.pid as number);
    const from = profilerClock();
    const r = await closedLoop(
      CLIENTS,
      ids.length,
      async (k) => (await pay(ids[k] as string)).status === 200,
    );
    if (profiled) windows.set(profiled, [from, profilerClock()]);
    const splitAfter = split(server.pid as number);
    const each = (k: keyof typeof splitAfter) => ((splitAfter[k] - splitBefore[k]) / r.requests).toFixed(2);
    const per = (b: Map<number, number>, a: Map<number, number>) => cpuDelta(b, a) / r.requests;
    const row = {
      variant,
      perSecond: r.perSecond,
      p50: r.p50,
      api: per(before.api, cpuMs(server.pid as number)),
      pg: per(before.pg, cpuMs(postmasterPid)),
      provider: per(before.provider, cpuMs(provider.pid)),
    };
    if (!profiled) rows.push(row);
    console.log(
      `pass ${pass} ${variant}${profiled ? " (profiled)" : ""}: ${r.perSecond.toFixed(0)}/s, p50 ${r.p50.toFixed(2)} ms, CPU ms per payment: API ${row.api.toFixed(2)}, PostgreSQL ${row.pg.toFixed(2)}, provider ${row.provider.toFixed(2)}; API main thread user ${each("user")} + system ${each("sys")} ms, other threads ${each("helpers")} ms; its context switches ${each("voluntary")} waiting + ${each("forced")} preempted${r.unexpected ? `, ${r.unexpected} unexpected` : ""}`,
    );
    await stop(server);
  }

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
console.log(`\nfresh payments ×${CLIENTS}, ${PAYMENTS} per pass, medians of the unprofiled passes`);
console.log("| server | per s | p50 ms | CPU ms/payment: API | PostgreSQL | provider |");
console.log("|---|---|---|---|---|---|");
for (const variant of variants) {
  const mine = rows.filter((r) => r.variant === variant);
  const m = (k: "perSecond" | "p50" | "api" | "pg" | "provider") => median(mine.map((r) => r[k]));
  console.log(
    `| ${variant} | ${m("perSecond").toFixed(0)} | ${m("p50").toFixed(2)} | ${m("api").toFixed(2)} | ${m("pg").toFixed(2)} | ${m("provider").toFixed(2)} |`,
  );
}
for (const [dir, window] of windows) {
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (file) summarizeProfile(join(dir, file), PAYMENTS, ...window, 30, process.env.BENCH_PROF_CALLERS);
}

client.close();
await admin.end();
await provider.stop();
await providerDatabase.stop();
await database.stop();
