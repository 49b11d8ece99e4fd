/**
 * `npm run bench:instances`: payments per second through one API instance and through two, in
 * one run, both through PgBouncer (transaction mode) to one PostgreSQL, and where the CPU went.
 * Rounds alternate 1, 2, 1, 2 ... so that the shared machine's background load falls on both.
 * Each payment is a client that retries its own key on 409 (in flight) and 5xx, as the browser.
 */
import { performance } from "node:perf_hooks";
import { findBinary } from "../../scripts/lib/debian-package";
import { startDatabase } from "../../scripts/lib/embedded-pg";
import { startPgbouncer } from "../../scripts/lib/pgbouncer";
import { startProvider } from "../../scripts/lib/provider-process";
import { allProcesses, postmasterOnPort, treeCpuSeconds } from "./cpu";

// Stopping the database at the end cuts this process's idle connections; their warnings are not
// results. The instances log as in production (one line per request at info).
const INSTANCE_LOG_LEVEL = process.env.LOG_LEVEL ?? "info";
process.env.LOG_LEVEL = "error";
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const pgbouncer = findBinary("pgbouncer");
if (!pgbouncer) throw new Error("pgbouncer is not installed: apt-get install -y pgbouncer");

const database = await startDatabase({ instance: "test" });
process.env.DATABASE_URL = database.url;
const { applyMigrations } = await import("../../server/db/migrate");
await applyMigrations(database.url);
const { closeDb, db } = await import("../../server/db");
const { seedDemoData } = await import("../../server/seed");
await seedDemoData(db(), { production: false });
const { createTestAccount } = await import("../../server/test/fixtures");
const { createTestOrder, newKey } = await import("../../server/test/payments");
const { postPayment, startApiProcess } = await import("../../server/test/processes");

const pooler = await startPgbouncer({ databaseUrl: database.url, binary: pgbouncer });
const provider = await startProvider({ databaseUrl: database.url });
const apiEnv = {
  DATABASE_URL: pooler.url,
  DIRECT_DATABASE_URL: database.url,
  PAYMENT_PROVIDER_URL: provider.url,
  LOG_LEVEL: INSTANCE_LOG_LEVEL,
};
const instances = await Promise.all([startApiProcess(apiEnv), startApiProcess(apiEnv)]);
const account = await createTestAccount("bench");

type Part = "instances" | "pgbouncer" | "postgres" | "provider" | "driver";
function cpuNow(): Record<Part, number> {
  const procs = allProcesses();
  const postmaster = database.embedded ? postmasterOnPort(Number(new URL(database.url).port), procs) : null;
  return {
    instances: instances.reduce((sum, i) => sum + treeCpuSeconds(i.pid, procs), 0),
    pgbouncer: treeCpuSeconds(pooler.pid, procs),
    // A shared external server's CPU is not ours to count.
    postgres: postmaster ? treeCpuSeconds(postmaster, procs) : Number.NaN,
    provider: treeCpuSeconds(provider.pid, procs),
    driver: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  };
}

const retried = new Map<number, number>();
async function payOnce(url: string, orderId: string): Promise<number> {
  const key = newKey();
  const t0 = performance.now();
  for (let attempt = 0; attempt < 100; attempt++) {
    const res = await postPayment(url, account.token, key, { orderId, paymentMethod: "pm_card_visa" });
    if (res.status === 200) return performance.now() - t0;
    retried.set(res.status, (retried.get(res.status) ?? 0) + 1);
    if (res.status !== 409 && res.status < 500)
      throw new Error(`payment answered ${res.status}: ${res.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`payment for ${orderId} never settled`);
}

async function round(count: 1 | 2) {
  const orders = await Promise.all(Array.from({ length: PAYMENTS }, () => createTestOrder(account)));
  const urls = instances.slice(0, count).map((i) => i.url);
  retried.clear();
  const before = cpuNow();
  const t0 = performance.now();
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let n = next++; n < orders.length; n = next++)
        latencies.push(await payOnce(urls[n % urls.length] as string, (orders[n] as { id: string }).id));
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const after = cpuNow();
  const cpu = Object.fromEntries(
    (Object.keys(before) as Part[]).map((k) => [k, after[k] - before[k]]),
  ) as Record<Part, number>;
  latencies.sort((a, b) => a - b);
  const retries = [...retried].map(([status, n]) => `${n}×${status}`).join(" ") || "none";
  return {
    count,
    seconds,
    perSecond: PAYMENTS / seconds,
    p50: latencies[latencies.length >> 1] ?? 0,
    cpu,
    retries,
  };
}

try {
  await round(2); // warm-up of both instances: JIT, pools, caches
  await round(2);
  const results: Awaited<ReturnType<typeof round>>[] = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await round(1), await round(2));
  const fmt = (n: number) => (Number.isNaN(n) ? "n/a" : n.toFixed(1));
  console.log(
    `\n${PAYMENTS} payments per round, ${CONCURRENCY} clients, ${ROUNDS} rounds each, interleaved\n`,
  );
  console.log(
    "instances | payments/s | p50 ms | CPU s: instances / pgbouncer / postgres / provider / driver | wall s",
  );
  for (const r of results) {
    const c = r.cpu;
    console.log(
      `${r.count} | ${r.perSecond.toFixed(1)} | ${r.p50.toFixed(0)} | ${[c.instances, c.pgbouncer, c.postgres, c.provider, c.driver].map(fmt).join(" / ")} | ${r.seconds.toFixed(1)} | ${r.retries}`,
    );
  }
  const mean = (count: number) => {
    const rs = results.filter((r) => r.count === count);
    return rs.reduce((s, r) => s + r.perSecond, 0) / rs.length;
  };
  console.log(`\nratio 2 instances / 1 instance: ${(mean(2) / mean(1)).toFixed(2)}`);
} finally {
  await Promise.all(instances.map((i) => i.stop()));
  await provider.stop();
  await pooler.stop();
  await closeDb();
  await database.stop();
}
