import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { FloorResult } from "./floor";
import { closedLoop, httpClient, type LoadResult } from "./load";
import { cpuDelta, cpuMs } from "./proc";

// The API tier (scripts/api.ts, what `npm run start:api` and the cluster run) measured beside the
// Next route in the same run, and issue 43's targets for it.

export const API_TIER = "API tier";

interface Measured extends LoadResult {
  cpu?: { server: number; postgres?: number; provider: number };
}

export interface ApiTierBench {
  root: string;
  port: number;
  env: Record<string, string>;
  clients: readonly number[];
  /** Requests per load at each client count: fresh and replay, refund (×16 only). */
  sizes: { fresh: number[]; replay: number[]; refund: number[] };
  orders(n: number): Promise<string[]>;
  paymentsOf(orderIds: string[]): Promise<string[]>;
  payBody(orderId: string): string;
  customer: string;
  operator: string;
  /** The bench's measuring wrapper; `appCpu` reads the API process's CPU. */
  measure(run: () => Promise<LoadResult>, appCpu: () => Map<number, number>): Promise<Measured>;
  /** The CPU of the process whose background jobs relay the outbox meanwhile (the Next server's). */
  workersCpu(): Map<number, number>;
}

/** Runs the API tier's loads and returns their rows (`API tier: fresh ×16`, …) and the workers' CPU per request. */
export async function runApiTier(b: ApiTierBench): Promise<{
  rows: Record<string, Measured>;
  workers: Record<string, number>;
}> {
  const server = await startApiTier(b);
  const client = httpClient(`http://127.0.0.1:${b.port}`, 40);
  const rows: Record<string, Measured> = {};
  const workers: Record<string, number> = {};
  const record = async (name: string, run: () => Promise<LoadResult>) => {
    const before = b.workersCpu();
    const m = await b.measure(run, () => cpuMs(server.pid as number));
    rows[`${API_TIER}: ${name}`] = m;
    workers[`${API_TIER}: ${name}`] = cpuDelta(before, b.workersCpu()) / m.requests;
  };
  const pay = (key: string, orderId: string) =>
    client.request(
      "POST",
      "/api/trpc/payments.create",
      { authorization: b.customer, "idempotency-key": key },
      b.payBody(orderId),
    );
  try {
    for (let i = 0; i < 20; i++) await client.request("GET", "/api/trpc/catalog.list", {});
    // A warm-up as the Next route's passes have (BENCH_WARMUP): its JIT and its pool's
    // backends are warm before the first measured row, not during it.
    const warm = await b.orders(200);
    await closedLoop(
      16,
      warm.length,
      async (k) => (await pay(randomUUID(), warm[k] as string)).status === 200,
    );
    for (const [i, clients] of b.clients.entries()) {
      const n = (s: number[]) => s[i] as number;
      await record(`catalog.list ×${clients}`, () =>
        closedLoop(
          clients,
          n(b.sizes.replay),
          async () => (await client.request("GET", "/api/trpc/catalog.list", {})).status === 200,
        ),
      );
      const ids = await b.orders(n(b.sizes.fresh));
      const keys = ids.map(() => randomUUID());
      await record(`fresh ×${clients}`, () =>
        closedLoop(
          clients,
          ids.length,
          async (k) => (await pay(keys[k] as string, ids[k] as string)).status === 200,
        ),
      );
      await record(`replay ×${clients}`, () =>
        closedLoop(clients, n(b.sizes.replay), async (k) => {
          const j = k % ids.length;
          return (await pay(keys[j] as string, ids[j] as string)).status === 200;
        }),
      );
      if (clients !== 16) continue;
      const paid = await b.paymentsOf(ids.slice(0, n(b.sizes.refund)));
      await record(`refund ×${clients}`, () =>
        closedLoop(clients, paid.length, async (k) => {
          const body = JSON.stringify({ paymentId: paid[k], amountMinor: 2500, reason: "bench" });
          const headers = { authorization: b.operator, "idempotency-key": randomUUID() };
          return (
            (await client.request("POST", "/api/trpc/admin.refunds.create", headers, body)).status === 200
          );
        }),
      );
    }
  } finally {
    client.close();
    await stop(server);
  }
  return { rows, workers };
}

/** The production entry as a deployment runs it (JSON logs), its outbox left to the Next server's jobs. */
async function startApiTier(b: ApiTierBench): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/api.ts"], {
    cwd: b.root,
    env: { ...process.env, ...b.env, PORT: String(b.port), HOSTNAME: "127.0.0.1", BACKGROUND_JOBS: "off" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${b.port}/api/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`the API tier did not answer on port ${b.port}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

const fmt = (x: number | undefined, d = 2) => (x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(d));

/**
 * Each API-tier row against the pgbench floor and the Next route's best pass, the CPU per request
 * of each process, and issue 43's four targets with whether each holds.
 */
export function printApiTier(
  results: Record<string, Measured[]>,
  workers: Record<string, number>,
  floor: (FloorResult | undefined)[],
): void {
  const best = (name: string, key: "perSecond" | "p50") => {
    const xs = (results[name] ?? []).map((r) => r[key]);
    if (xs.length === 0) return Number.NaN;
    return key === "perSecond" ? Math.max(...xs) : Math.min(...xs);
  };
  const floorOf = (clients: number) => floor.find((f) => f?.clients === clients);
  console.log(`\n${API_TIER} (scripts/api.ts) beside the Next route (its best pass) and the pgbench floor`);
  console.log(
    "| what | p50 ms | per s | / floor (×1: p50 over latency; ×16: per s over tps) | / Next route (×1: p50; ×16: per s) | CPU ms/req: API process | PostgreSQL | provider | workers (Next's jobs) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const what of ["fresh ×1", "fresh ×16", "replay ×1", "replay ×16", "refund ×16"]) {
    const name = `${API_TIER}: ${what}`;
    const r = results[name]?.[0];
    if (!r) continue;
    const single = what.endsWith("×1");
    const f = floorOf(single ? 1 : 16);
    const overFloor = f ? (single ? r.p50 / f.latencyMs : r.perSecond / f.tps) : Number.NaN;
    const overNext = single ? r.p50 / best(what, "p50") : r.perSecond / best(what, "perSecond");
    console.log(
      `| ${name} | ${fmt(r.p50)} | ${fmt(r.perSecond, 0)} | ${fmt(overFloor, 3)} | ${fmt(overNext, 3)} | ${fmt(r.cpu?.server)} | ${fmt(r.cpu?.postgres)} | ${fmt(r.cpu?.provider)} | ${fmt(workers[name])} |`,
    );
  }
  const fresh16 = results[`${API_TIER}: fresh ×16`]?.[0];
  const fresh1 = results[`${API_TIER}: fresh ×1`]?.[0];
  const [f1, f16] = [floorOf(1), floorOf(16)];
  const targets: [string, number, (x: number) => boolean][] = [
    [
      "fresh ×16 / the Next route's fresh ×16 (≥ 1.5)",
      (fresh16?.perSecond ?? Number.NaN) / best("fresh ×16", "perSecond"),
      (x) => x >= 1.5,
    ],
    [
      "fresh ×16 / pgbench ×16 tps (≥ 0.15)",
      (fresh16?.perSecond ?? Number.NaN) / (f16?.tps ?? Number.NaN),
      (x) => x >= 0.15,
    ],
    [
      "the API process's CPU ms per fresh payment ×16 (≤ 1.2)",
      fresh16?.cpu?.server ?? Number.NaN,
      (x) => x <= 1.2,
    ],
    [
      "fresh ×1 p50 / pgbench ×1 latency (≤ 3.5)",
      (fresh1?.p50 ?? Number.NaN) / (f1?.latencyMs ?? Number.NaN),
      (x) => x <= 3.5,
    ],
  ];
  console.log("\nissue 43's targets for the API tier");
  for (const [what, value, holds] of targets)
    console.log(
      `${what}: ${fmt(value, 3)} ${Number.isFinite(value) ? (holds(value) ? "holds" : "MISSED") : "not measured"}`,
    );
}
