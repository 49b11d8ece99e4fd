import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import type { FloorResult } from "./floor";
import { closedLoop, httpClient, type LoadResult } from "./load";
import { cpuDelta, cpuMs } from "./proc";

// The API tier (scripts/api.ts, what `npm run start:api` and the cluster run) measured beside the
// Next route in the same run, and issue 43's targets for it.

export const API_TIER = "API tier";
/** A bare node:http server making a fresh payment's round trips: what any Node server pays for them. */
export const SKELETON = "bare server, the same round trips";

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

/** The API tier started once beside the Next server; `pass` runs its loads, interleaved with the Next route's passes. */
export interface ApiTierRun {
  /** One pass of the tier's rows (`API tier: fresh ×16`, …), handed to `record`. */
  pass(record: (name: string, m: Measured) => void): Promise<void>;
  /** The CPU ms per request of the process whose jobs relay the outbox meanwhile, by row, per recorded pass. */
  workers: Record<string, number[]>;
  stop(): Promise<void>;
}

/** Starts the production bundle (`node dist/api.mjs`, what a deployment runs) on `b.port`. */
export async function startApiTierBench(b: ApiTierBench): Promise<ApiTierRun> {
  const server = await startProcess(b, ["dist/api.mjs"], b.port);
  // The same round trips from a bare node:http server, no app code (lab/bench/skeleton-server.mjs).
  const skeleton = await startProcess(b, ["lab/bench/skeleton-server.mjs"], b.port + 1);
  const bare = httpClient(`http://127.0.0.1:${b.port + 1}`, 40);
  const client = httpClient(`http://127.0.0.1:${b.port}`, 40);
  const workers: Record<string, number[]> = {};
  const pay = (key: string, orderId: string) =>
    client.request(
      "POST",
      "/api/trpc/payments.create",
      { authorization: b.customer, "idempotency-key": key },
      b.payBody(orderId),
    );
  for (let i = 0; i < 20; i++) await client.request("GET", "/api/trpc/catalog.list", {});
  async function pass(keep: (name: string, m: Measured) => void) {
    const record = async (what: string, run: () => Promise<LoadResult>, of = server, prefix = API_TIER) => {
      const before = b.workersCpu();
      const m = await b.measure(run, () => cpuMs(of.pid as number));
      const name = `${prefix}: ${what}`;
      keep(name, m);
      workers[name] = [...(workers[name] ?? []), cpuDelta(before, b.workersCpu()) / m.requests];
    };
    for (const [i, clients] of b.clients.entries()) {
      const n = (s: number[]) => s[i] as number;
      // The edge alone: the tier answering a route that does nothing (no database).
      await record(`no database (/api/health/live) ×${clients}`, () =>
        closedLoop(
          clients,
          n(b.sizes.replay),
          async () => (await client.request("GET", "/api/health/live", {})).status === 200,
        ),
      );
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
      await record(
        `fresh ×${clients}`,
        () =>
          closedLoop(clients, ids.length, async (k) => {
            const headers = { authorization: b.customer, "idempotency-key": randomUUID() };
            return (await bare.request("POST", "/pay", headers, b.payBody(ids[k] as string))).status === 200;
          }),
        skeleton,
        SKELETON,
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
  }
  return {
    pass,
    workers,
    stop: async () => {
      client.close();
      bare.close();
      await stop(server);
      await stop(skeleton);
    },
  };
}

/** A server as a deployment runs it (JSON logs), its outbox left to the Next server's jobs. */
async function startProcess(b: ApiTierBench, args: string[], port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    cwd: b.root,
    env: { ...process.env, ...b.env, PORT: String(port), HOSTNAME: "127.0.0.1", BACKGROUND_JOBS: "off" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/api/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`${args.join(" ")} did not answer on port ${port}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

const fmt = (x: number | undefined, d = 2) => (x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(d));

/**
 * Each API-tier row against the pgbench floor and the Next route's row of the same pass, the CPU
 * per request of each process, issue 43's four targets per pass, and what bounds each target:
 * the CPU the other processes spend per payment on this machine's cores, the provider's own
 * latency, and the edge's and the app's own CPU apart.
 */
export function printApiTier(
  results: Record<string, Measured[]>,
  workers: Record<string, number[]>,
  floor: (FloorResult | undefined)[],
): void {
  const floorOf = (clients: number) => floor.find((f) => f?.clients === clients);
  const passes = results[`${API_TIER}: fresh ×16`]?.length ?? 0;
  const at = (name: string, p: number) => results[name]?.[p];
  const perPass = (value: (p: number) => number, d = 3) =>
    Array.from({ length: passes }, (_, p) => fmt(value(p), d)).join(" / ");
  console.log(`\n${API_TIER} (node dist/api.mjs) beside the Next route (same pass) and the pgbench floor`);
  console.log(
    "| what | pass | p50 ms | per s | / floor (×1: p50 over latency; ×16: per s over tps) | / Next route (×1: p50; ×16: per s) | CPU ms/req: API process | PostgreSQL | provider | workers (Next's jobs) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const what of [
    "no database (/api/health/live) ×1",
    "no database (/api/health/live) ×16",
    "catalog.list ×16",
    "fresh ×1",
    "fresh ×16",
    "replay ×1",
    "replay ×16",
    "refund ×16",
  ]) {
    const name = `${API_TIER}: ${what}`;
    const next = what.startsWith("no database") ? `Next, ${what}` : what;
    for (const [p, r] of (results[name] ?? []).entries()) {
      const single = what.endsWith("×1");
      const f = floorOf(single ? 1 : 16);
      const overFloor = f ? (single ? r.p50 / f.latencyMs : r.perSecond / f.tps) : Number.NaN;
      const n = at(next, p);
      const overNext = n ? (single ? r.p50 / n.p50 : r.perSecond / n.perSecond) : Number.NaN;
      console.log(
        `| ${name} | ${p + 1} | ${fmt(r.p50)} | ${fmt(r.perSecond, 0)} | ${fmt(overFloor, 3)} | ${fmt(overNext, 3)} | ${fmt(r.cpu?.server)} | ${fmt(r.cpu?.postgres)} | ${fmt(r.cpu?.provider)} | ${fmt(workers[name]?.[p])} |`,
      );
    }
  }
  for (const clients of [1, 16])
    for (const [p, r] of (results[`${SKELETON}: fresh ×${clients}`] ?? []).entries())
      console.log(
        `| ${SKELETON}: fresh ×${clients} | ${p + 1} | ${fmt(r.p50)} | ${fmt(r.perSecond, 0)} | – | – | ${fmt(r.cpu?.server)} | ${fmt(r.cpu?.postgres)} | ${fmt(r.cpu?.provider)} | – |`,
      );
  const fresh16 = (p: number) => at(`${API_TIER}: fresh ×16`, p);
  const fresh1 = (p: number) => at(`${API_TIER}: fresh ×1`, p);
  const [f1, f16] = [floorOf(1), floorOf(16)];
  const targets: [string, (p: number) => number, (x: number) => boolean][] = [
    [
      "fresh ×16 / the Next route's fresh ×16 (≥ 1.5)",
      (p) => (fresh16(p)?.perSecond ?? Number.NaN) / (at("fresh ×16", p)?.perSecond ?? Number.NaN),
      (x) => x >= 1.5,
    ],
    [
      "fresh ×16 / pgbench ×16 tps (≥ 0.15)",
      (p) => (fresh16(p)?.perSecond ?? Number.NaN) / (f16?.tps ?? Number.NaN),
      (x) => x >= 0.15,
    ],
    [
      "the API process's CPU ms per fresh payment ×16 (≤ 1.2)",
      (p) => fresh16(p)?.cpu?.server ?? Number.NaN,
      (x) => x <= 1.2,
    ],
    [
      "fresh ×1 p50 / pgbench ×1 latency (≤ 3.5)",
      (p) => (fresh1(p)?.p50 ?? Number.NaN) / (f1?.latencyMs ?? Number.NaN),
      (x) => x <= 3.5,
    ],
  ];
  console.log("\nissue 43's targets for the API tier (per pass)");
  for (const [what, value, holds] of targets) {
    const xs = Array.from({ length: passes }, (_, p) => value(p));
    const held = xs.filter((x) => Number.isFinite(x) && holds(x)).length;
    console.log(`${what}: ${perPass(value)}: holds in ${held} of ${passes} passes`);
  }
  // What bounds each target on this machine, from figures of the same passes.
  const cores = availableParallelism();
  const others = (p: number) =>
    (fresh16(p)?.cpu?.postgres ?? Number.NaN) + (fresh16(p)?.cpu?.provider ?? Number.NaN);
  const ceiling = (p: number) => (cores * 1000) / others(p);
  console.log(`\nwhat bounds them (${cores} cores shared by every process)`);
  console.log(
    `PostgreSQL + provider CPU ms per fresh payment ×16: ${perPass(others, 2)}; with an API process that cost nothing, fresh ×16 could reach at most ${perPass(ceiling, 0)} per s: ${perPass((p) => ceiling(p) / (at("fresh ×16", p)?.perSecond ?? Number.NaN))}× the Next route, ${perPass((p) => ceiling(p) / (f16?.tps ?? Number.NaN))}× the floor`,
  );
  const bare = (p: number) => at(`${SKELETON}: fresh ×16`, p)?.cpu?.server ?? Number.NaN;
  const bareCeiling = (p: number) => (cores * 1000) / (others(p) + bare(p));
  console.log(
    `a bare node:http server making the same round trips (lab/bench/skeleton-server.mjs), CPU ms per payment ×16: ${perPass(bare, 2)}; with the API process at that cost, fresh ×16 could reach at most ${perPass(bareCeiling, 0)} per s: ${perPass((p) => bareCeiling(p) / (at("fresh ×16", p)?.perSecond ?? Number.NaN))}× the Next route, ${perPass((p) => bareCeiling(p) / (f16?.tps ?? Number.NaN))}× the floor`,
  );
  console.log(
    `the API process's CPU per request ×16: the edge alone (/api/health/live) ${perPass((p) => at(`${API_TIER}: no database (/api/health/live) ×16`, p)?.cpu?.server ?? Number.NaN, 2)} ms; the same payment in process, no HTTP (this process's CPU) ${perPass((p) => at("in process: payments.create ×16", p)?.cpu?.server ?? Number.NaN, 2)} ms; a fresh payment through the tier ${perPass((p) => fresh16(p)?.cpu?.server ?? Number.NaN, 2)} ms`,
  );
  console.log(
    `×1: the provider's charge alone, p50 / pgbench ×1 latency: ${perPass((p) => (at("provider charge alone ×1", p)?.p50 ?? Number.NaN) / (f1?.latencyMs ?? Number.NaN), 2)}; the tier's replay ×1 (one statement, no provider) ${perPass((p) => (at(`${API_TIER}: replay ×1`, p)?.p50 ?? Number.NaN) / (f1?.latencyMs ?? Number.NaN), 2)}`,
  );
}
