import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { apiTierArgs } from "./lib/api-bundle";
import { requireBinaries } from "./lib/debian-package";
import { enterStage } from "./lib/dotenv";
import { HA_DEFAULTS, type HaCluster, requirePgServer, startHaPostgres } from "./lib/ha-postgres";
import { HEALTH_CHECK_PATH, startHaproxy } from "./lib/haproxy";
import { waitForHealth } from "./lib/health-wait";
import { onStopSignal } from "./lib/stop-signal";

/**
 * `npm run cluster`: the deployed shape on one machine. CLUSTER_INSTANCES `next start` processes
 * (default 2) for the pages and CLUSTER_API_INSTANCES API-tier processes (node dist/api.mjs, default
 * 2) for /api/, each through PgBouncer in transaction mode to one PostgreSQL, behind HAProxy on
 * PORT, which routes by path (decision 0211). Background jobs run in every instance
 * (docs/decisions/0021). Ctrl-C stops everything.
 * CLUSTER_DATABASE=patroni puts a highly available PostgreSQL (Patroni, etcd, a primary and a
 * synchronous standby, HAProxy to the primary) behind PgBouncer instead (docs/scaling.md).
 */
// Before any import that reads the environment: `.env`, APP_ENV=production unless set, secrets checked.
const env = await enterStage("production");
const { startStack, stackInstance } = await import("./lib/stack");
const ZCluster = z.object({
  CLUSTER_INSTANCES: z.coerce.number().int().min(1).max(16).default(2),
  CLUSTER_INSTANCE_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** 0: no API tier, Next serves /api/ too. */
  CLUSTER_API_INSTANCES: z.coerce.number().int().min(0).max(16).default(2),
  PGBOUNCER_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** `single`: the embedded (or DATABASE_URL) server; `patroni`: the HA cluster (decision 0080). */
  CLUSTER_DATABASE: z.enum(["single", "patroni"]).default("single"),
  /** With patroni: `synchronous` (default), `strict` (no standby, no writes) or `asynchronous`. */
  CLUSTER_REPLICATION: z.enum(["synchronous", "strict", "asynchronous"]).default("synchronous"),
});
const parsed = ZCluster.safeParse(
  Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== "")),
);
if (!parsed.success) {
  for (const i of parsed.error.issues)
    console.error(`Invalid environment: ${i.path.join(".")}: ${i.message}`);
  process.exit(1);
}
const { CLUSTER_INSTANCES, PGBOUNCER_PORT, CLUSTER_DATABASE, CLUSTER_REPLICATION } = parsed.data;
const ha = CLUSTER_DATABASE === "patroni";
const firstPort = parsed.data.CLUSTER_INSTANCE_PORT ?? env.PORT + 1;
const ports = Array.from({ length: CLUSTER_INSTANCES }, (_, i) => firstPort + i);
// The API tier's ports follow the Next instances'.
const apiPorts = Array.from(
  { length: parsed.data.CLUSTER_API_INSTANCES },
  (_, i) => firstPort + ports.length + i,
);

let binaries: ReturnType<typeof requireBinaries>;
let pgBinDir = "";
try {
  binaries = requireBinaries(ha ? ["pgbouncer", "haproxy", "patroni", "etcd"] : ["pgbouncer", "haproxy"]);
  if (ha) pgBinDir = requirePgServer();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
if (!existsSync(`${process.env.NEXT_DIST_DIR ?? ".next"}/BUILD_ID`))
  execFileSync("node_modules/.bin/next", ["build"], { stdio: "inherit" });

let cluster: HaCluster | undefined;
if (ha) {
  if (process.env.DATABASE_URL) {
    console.error("CLUSTER_DATABASE=patroni starts its own database: unset DATABASE_URL");
    process.exit(1);
  }
  cluster = await startHaPostgres({
    binaries: { patroni: binaries.patroni, etcd: binaries.etcd, haproxy: binaries.haproxy },
    pgBinDir,
    synchronous: CLUSTER_REPLICATION !== "asynchronous",
    strict: CLUSTER_REPLICATION === "strict",
  });
  console.log(
    `Patroni cluster: ${cluster.nodes.map((n) => `${n.name} on ${n.pgPort} (REST ${n.restPort})`).join(", ")}, ` +
      `primary through HAProxy on ${HA_DEFAULTS.entryPort}, ${CLUSTER_REPLICATION} replication`,
  );
}
const stack = await startStack(stackInstance(env.isProduction), {
  appUrl: `http://127.0.0.1:${env.PORT}`,
  pgbouncer: binaries.pgbouncer,
  pgbouncerPort: PGBOUNCER_PORT,
  // Each instance opens up to 17 client connections (Prisma 10, pg-boss 4, the abuse limiter 3):
  // past 5 instances PgBouncer's default of 100 would refuse some. Server connections stay at 20.
  // Behind a failing-over database PgBouncer must retry a failed login within a second, not 15.
  pgbouncerSettings: {
    max_client_conn: Math.max(100, (CLUSTER_INSTANCES + apiPorts.length) * 17 + 20),
    ...(ha ? { server_login_retry: 1, server_connect_timeout: 3 } : {}),
  },
  ...(cluster ? { database: { url: cluster.url, embedded: false, stop: () => cluster.stop() } } : {}),
});
const watchdog = fileURLToPath(new URL("./lib/die-with-parent.cjs", import.meta.url));
const children: ChildProcess[] = [];
let stopping = false;
let lb: Awaited<ReturnType<typeof startHaproxy>> | undefined;

async function stopAll(code: number): Promise<never> {
  stopping = true;
  await lb?.stop();
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once("exit", () => resolve());
          c.kill("SIGTERM");
        }),
    ),
  );
  await stack.stop();
  console.log("cluster stopped");
  process.exit(code);
}
onStopSignal(() => {
  if (!stopping) void stopAll(0);
});

/** One server of the cluster: a dead one drops out of HAProxy's rotation; the cluster stops when none is left. */
function startInstance(name: string, command: string, args: string[], port: number): void {
  const child = spawn(command, args, {
    stdio: "inherit",
    env: {
      ...process.env,
      ...stack.env,
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${watchdog}`].filter(Boolean).join(" "),
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      // HAProxy in front replaces X-Forwarded-For with the client's address: one trusted hop.
      TRUSTED_PROXY_HOPS: "1",
    },
  });
  children.push(child);
  console.log(`${name}: pid ${child.pid}, port ${port}`);
  child.on("exit", (code, signal) => {
    if (stopping) return;
    console.error(`${name} on port ${port} exited (${signal ?? code})`);
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) void stopAll(1);
  });
}

try {
  for (const [i, port] of ports.entries())
    startInstance(
      `instance ${i + 1}`,
      "node_modules/.bin/next",
      ["start", "--port", String(port), "--hostname", "127.0.0.1"],
      port,
    );
  const apiArgs = apiPorts.length > 0 ? apiTierArgs() : [];
  for (const [i, port] of apiPorts.entries())
    startInstance(`api instance ${i + 1}`, process.execPath, apiArgs, port);
  await Promise.all(
    [...ports, ...apiPorts].map((port) => waitForHealth(`http://127.0.0.1:${port}${HEALTH_CHECK_PATH}`)),
  );
  lb = await startHaproxy({
    binary: binaries.haproxy,
    port: env.PORT,
    backends: ports,
    apiBackends: apiPorts,
  });
  const tier =
    apiPorts.length > 0
      ? ` and ${apiPorts.length} API-tier instances for /api/ (ports ${apiPorts.join(", ")})`
      : "";
  console.log(
    `cluster ready on http://localhost:${env.PORT}: ${ports.length} instances (ports ${ports.join(", ")})${tier} ` +
      `behind HAProxy, through PgBouncer in transaction mode`,
  );
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stopAll(1);
}
