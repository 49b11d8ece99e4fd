import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { assertPortFree, type GuardedProcess, startGuarded, waitForPort } from "./guarded-process";

/**
 * A highly available PostgreSQL from Debian's packages (decision 0080): etcd holds the leader key,
 * one Patroni per node runs its PostgreSQL, replicates, fails over and rejoins, and HAProxy routes
 * to whichever node Patroni's REST API calls the primary. Synchronous by default: a commit the app
 * saw is on two nodes.
 */
export interface HaOptions {
  binaries: { patroni: string; etcd: string; haproxy: string };
  /** PostgreSQL's bin folder (Debian's /usr/lib/postgresql/N/bin). */
  pgBinDir: string;
  /** Where the nodes' data live; kept between runs unless `fresh`. */
  dir?: string;
  fresh?: boolean;
  nodes?: number;
  /** Node i listens on pgBasePort + i, its Patroni REST API on restBasePort + i. */
  pgBasePort?: number;
  restBasePort?: number;
  etcdClientPort?: number;
  etcdPeerPort?: number;
  /** HAProxy's port: the app's way to the primary. */
  entryPort?: number;
  /** Patroni's synchronous_mode: a commit waits for a standby's flush. Default on. */
  synchronous?: boolean;
  /**
   * Patroni's synchronous_mode_strict: with no standby left, commits wait (writes stop) instead
   * of going on without one. Default off (decision 0080).
   */
  strict?: boolean;
  /** Databases created on the primary once it is up. */
  databases?: string[];
}

export interface HaNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
}

export interface NodeState {
  name: string;
  /** Patroni's role: "master"/"primary", "replica", "sync_standby"… or "unreachable". */
  role: string;
  state: string;
  timeline?: number;
}

export interface HaCluster {
  /** The primary, through HAProxy, as the superuser; the first of `databases`. */
  url: string;
  nodes: HaNode[];
  states(): Promise<NodeState[]>;
  /** The node whose Patroni answers 200 on /primary, once one does. */
  waitForPrimary(timeoutMs?: number): Promise<HaNode>;
  /** Until some node is the synchronous standby (or any replica streams, when asynchronous). */
  waitForStandby(timeoutMs?: number): Promise<HaNode>;
  /** The postmaster's pid on `node`, or null when it is not running. */
  postmasterPid(node: HaNode): number | null;
  /** Pids of the node's PostgreSQL processes whose title matches: `walreceiver`, `walsender`… */
  processPids(node: HaNode, title: string): number[];
  /** Stops (SIGTERM) or starts a node's Patroni: a whole node lost or back. */
  stopNode(node: HaNode): Promise<void>;
  startNode(node: HaNode): void;
  /** Changes Patroni's dynamic configuration (PATCH /config), e.g. `{ synchronous_mode: false }`. */
  configure(settings: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

// Listening ports below Linux's ephemeral range (32768-60999): a port in it can be held for a
// moment by any outgoing connection, and a node that cannot bind fails Patroni's bootstrap (seen:
// 55310 taken while CI's failover test started its cluster).
export const HA_DEFAULTS = {
  nodes: 2,
  pgBasePort: 25310,
  restBasePort: 8310,
  etcdClientPort: 23790,
  etcdPeerPort: 23800,
  entryPort: 25319,
} as const;

const SUPERUSER = { username: "postgres", password: "postgres" };
const REPLICATION = { username: "replicator", password: "replicator" };
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Debian's newest installed PostgreSQL server binaries, or null. */
export function findPgBinDir(root = "/usr/lib/postgresql"): string | null {
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

/**
 * Debian's PostgreSQL server binaries for Patroni to run: installed with apt-get when missing and
 * we are root, otherwise an error naming the command.
 */
export function requirePgServer(): string {
  const found = findPgBinDir();
  if (found) return found;
  if (process.getuid?.() !== 0)
    throw new Error("PostgreSQL's server is not installed: run `sudo apt-get install -y postgresql`");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "postgresql"], { stdio: "inherit", env });
  const installed = findPgBinDir();
  if (!installed) throw new Error("postgresql is still missing after apt-get install");
  return installed;
}

/** A folder of the project's own that the postgres user can reach (a checkout under /root cannot be). */
export function defaultHaDir(): string {
  const key = createHash("sha1").update(resolve(REPO_ROOT)).digest("hex").slice(0, 10);
  return join(tmpdir(), `checkout-ha-${key}`);
}

export async function startHaPostgres(opts: HaOptions): Promise<HaCluster> {
  const o = { ...HA_DEFAULTS, synchronous: true, strict: false, databases: ["checkout"], ...opts };
  const dir = o.dir ?? defaultHaDir();
  if (o.fresh) rmSync(dir, { recursive: true, force: true });
  const pgUser = process.getuid?.() === 0 ? postgresUser() : undefined;
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  for (const port of [o.etcdClientPort, o.etcdPeerPort, o.entryPort])
    await assertPortFree(port, "ha postgres");

  const started: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    for (const p of started.reverse()) await p.stop().catch(() => {});
  };
  try {
    const etcdDir = join(dir, "etcd");
    const etcd = startGuarded("etcd", o.binaries.etcd, [
      "--name=checkout-dcs",
      `--data-dir=${etcdDir}`,
      `--listen-client-urls=http://127.0.0.1:${o.etcdClientPort}`,
      `--advertise-client-urls=http://127.0.0.1:${o.etcdClientPort}`,
      `--listen-peer-urls=http://127.0.0.1:${o.etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${o.etcdPeerPort}`,
      `--initial-cluster=checkout-dcs=http://127.0.0.1:${o.etcdPeerPort}`,
      "--log-level=warn",
    ]);
    started.push(etcd);
    await waitForPort(o.etcdClientPort, etcd);

    const nodes: HaNode[] = Array.from({ length: o.nodes }, (_, i) => ({
      name: `node${i + 1}`,
      pgPort: o.pgBasePort + i,
      restPort: o.restBasePort + i,
      dataDir: join(dir, `node${i + 1}`, "data"),
    }));
    const patronis = new Map<string, GuardedProcess>();
    const configs = new Map<string, string>();
    for (const node of nodes) {
      await assertPortFree(node.pgPort, `${node.name}'s PostgreSQL`);
      await assertPortFree(node.restPort, `${node.name}'s Patroni`);
      const nodeDir = join(dir, node.name);
      mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
      const config = join(nodeDir, "patroni.yml");
      // JSON is YAML: Patroni reads it as it is.
      writeFileSync(config, JSON.stringify(patroniConfig(node, nodeDir, o), null, 2), { mode: 0o600 });
      if (pgUser) chownTree(nodeDir, pgUser);
      configs.set(node.name, config);
    }
    const launch = (node: HaNode) => {
      const config = configs.get(node.name) as string;
      // Patroni runs PostgreSQL, which refuses root: as root, both run as the postgres user.
      const proc = pgUser
        ? startGuarded(`patroni ${node.name}`, "setpriv", [
            `--reuid=${pgUser.uid}`,
            `--regid=${pgUser.gid}`,
            "--init-groups",
            o.binaries.patroni,
            config,
          ])
        : startGuarded(`patroni ${node.name}`, o.binaries.patroni, [config]);
      patronis.set(node.name, proc);
      return proc;
    };
    for (const node of nodes) launch(node);
    started.push({
      stop: async () => {
        await Promise.all([...patronis.values()].map((p) => p.stop()));
      },
    });

    const router = startPrimaryRouter(o.binaries.haproxy, o.entryPort, nodes, join(dir, "haproxy.cfg"));
    started.push(router);
    await waitForPort(o.entryPort, router);

    const states = () => Promise.all(nodes.map(nodeState));
    const waitFor = async (what: string, pick: (s: NodeState[]) => string | undefined, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = await states();
        const name = pick(current);
        const node = nodes.find((n) => n.name === name);
        if (node) return node;
        if (Date.now() > deadline) {
          const logs = nodes.map((n) => `--- ${n.name} ---\n${patronis.get(n.name)?.output().slice(-3000)}`);
          throw new Error(
            `no ${what} within ${timeoutMs} ms: ${JSON.stringify(current)}\n${logs.join("\n")}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const isPrimary = (s: NodeState) =>
      (s.role === "master" || s.role === "primary") && s.state === "running";
    const cluster: HaCluster = {
      url: `postgresql://${SUPERUSER.username}:${SUPERUSER.password}@127.0.0.1:${o.entryPort}/${o.databases[0]}`,
      nodes,
      states,
      waitForPrimary: (timeoutMs = 60_000) =>
        waitFor("primary", (s) => s.find(isPrimary)?.name, timeoutMs).then(async (node) => {
          // HAProxy checks every 500 ms; the entry answers once it has seen the new primary.
          await waitForEntry(o.entryPort, timeoutMs);
          return node;
        }),
      waitForStandby: (timeoutMs = 60_000) =>
        waitFor(
          o.synchronous ? "synchronous standby" : "replica",
          (s) => {
            // On the primary's timeline: a node restarted as a replica before its pg_rewind is
            // not following anyone yet.
            const timeline = s.find(isPrimary)?.timeline;
            return s.find(
              (n) =>
                (o.synchronous ? n.role === "sync_standby" : n.role === "replica") &&
                n.state === "running" &&
                timeline !== undefined &&
                n.timeline === timeline,
            )?.name;
          },
          timeoutMs,
        ),
      postmasterPid: (node) => {
        const file = join(node.dataDir, "postmaster.pid");
        if (!existsSync(file)) return null;
        const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
        return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
      },
      processPids: (node, title) => {
        const postmaster = cluster.postmasterPid(node);
        if (!postmaster) return [];
        const found = spawnSync("pgrep", ["-P", String(postmaster), "-f", title], { encoding: "utf8" });
        return found.stdout
          .split("\n")
          .map(Number)
          .filter((pid) => Number.isInteger(pid) && pid > 0);
      },
      stopNode: async (node) => {
        await patronis.get(node.name)?.stop();
      },
      startNode: (node) => {
        launch(node);
      },
      configure: async (settings) => {
        const primary = (await states()).find(isPrimary);
        const node = nodes.find((n) => n.name === primary?.name) ?? nodes[0];
        if (!node) throw new Error("no node to configure");
        const res = await fetch(`http://127.0.0.1:${node.restPort}/config`, {
          method: "PATCH",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(settings),
        });
        if (!res.ok) throw new Error(`PATCH /config: ${res.status} ${await res.text()}`);
      },
      stop,
    };
    await cluster.waitForPrimary(90_000);
    await createDatabases(cluster.url, o.databases);
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

function patroniConfig(node: HaNode, nodeDir: string, o: Required<Omit<HaOptions, "dir" | "fresh">>) {
  return {
    scope: "checkout",
    name: node.name,
    log: { level: "INFO", dir: nodeDir, file_num: 2, file_size: 10_000_000 },
    restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
    etcd3: { hosts: [`127.0.0.1:${o.etcdClientPort}`] },
    bootstrap: {
      dcs: {
        // A lost leader is replaced within about ttl; a crashed primary PostgreSQL is failed over
        // at once rather than restarted in place (primary_start_timeout 0).
        ttl: 10,
        loop_wait: 1,
        retry_timeout: 3,
        primary_start_timeout: 0,
        maximum_lag_on_failover: 1_048_576,
        synchronous_mode: o.synchronous,
        synchronous_mode_strict: o.strict,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            wal_level: "replica",
            hot_standby: "on",
            wal_log_hints: "on",
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: "256MB",
            max_connections: 100,
          },
        },
      },
      initdb: [{ encoding: "UTF8" }, { locale: "C" }],
    },
    postgresql: {
      listen: `127.0.0.1:${node.pgPort}`,
      connect_address: `127.0.0.1:${node.pgPort}`,
      data_dir: node.dataDir,
      bin_dir: o.pgBinDir,
      pgpass: join(nodeDir, "pgpass"),
      authentication: { superuser: SUPERUSER, replication: REPLICATION, rewind: SUPERUSER },
      parameters: {
        unix_socket_directories: nodeDir,
        logging_collector: "on",
        log_directory: join(nodeDir, "log"),
      },
      pg_hba: [
        "local all all trust",
        `host replication ${REPLICATION.username} 127.0.0.1/32 scram-sha-256`,
        "host all all 127.0.0.1/32 scram-sha-256",
      ],
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}

/**
 * HAProxy in TCP mode in front of the nodes, sending connections only to the one whose Patroni
 * answers 200 on /primary (checked every 500 ms). A node marked down has its sessions cut, so
 * clients learn at once that their primary is gone instead of writing into a dead socket.
 */
function startPrimaryRouter(binary: string, port: number, nodes: HaNode[], config: string): GuardedProcess {
  const lines = [
    "global",
    "  maxconn 1000",
    "defaults",
    "  mode tcp",
    "  timeout connect 2s",
    "  timeout client 30m",
    "  timeout server 30m",
    "  timeout check 1s",
    "listen primary",
    `  bind 127.0.0.1:${port}`,
    "  option httpchk OPTIONS /primary",
    "  http-check expect status 200",
    "  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions",
    ...nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`),
  ];
  writeFileSync(config, `${lines.join("\n")}\n`);
  return startGuarded("haproxy (database)", binary, ["-db", "-f", config]);
}

async function nodeState(node: HaNode): Promise<NodeState> {
  try {
    const res = await fetch(`http://127.0.0.1:${node.restPort}/patroni`, {
      signal: AbortSignal.timeout(1000),
    });
    const body = (await res.json()) as {
      role?: string;
      state?: string;
      timeline?: number;
      sync_standby?: boolean;
    };
    // Patroni 3.0 reports a synchronous standby as a replica with sync_standby on /patroni.
    const role = body.role === "replica" && body.sync_standby ? "sync_standby" : (body.role ?? "unknown");
    return { name: node.name, role, state: body.state ?? "unknown", timeline: body.timeline };
  } catch {
    return { name: node.name, role: "unreachable", state: "unreachable" };
  }
}

async function waitForEntry(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({
      connectionString: `postgresql://${SUPERUSER.username}:${SUPERUSER.password}@127.0.0.1:${port}/postgres`,
      connectionTimeoutMillis: 1000,
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ ro: boolean }>("SELECT pg_is_in_recovery() AS ro");
      if (rows[0]?.ro === false) return;
    } catch {
      // not routed yet
    } finally {
      await client.end().catch(() => {});
    }
    if (Date.now() > deadline)
      throw new Error(`HAProxy on ${port} reached no primary within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function createDatabases(url: string, names: string[]): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    for (const name of names) {
      const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    }
  } finally {
    await client.end();
  }
}

function postgresUser(): { uid: number; gid: number } {
  const uid = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error(
      "running as root needs a `postgres` user for PostgreSQL (apt-get install -y postgresql-common)",
    );
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function chownTree(path: string, user: { uid: number; gid: number }): void {
  chownSync(path, user.uid, user.gid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) chownTree(child, user);
    else chownSync(child, user.uid, user.gid);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
