import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBinary } from "./debian-package";
import { assertPortFree, freePort, startGuarded, waitForPort } from "./guarded-process";

export interface Pooler {
  /** The database URL with PgBouncer's host and port in place of the server's. */
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export interface PoolerOptions {
  /** The server behind the pooler; its user and password are the pooler's too. */
  databaseUrl: string;
  binary: string;
  /** 0 or unset: any free port. */
  port?: number;
  /** Extra [pgbouncer] settings; the defaults are PgBouncer's own apart from the ones below. */
  settings?: Record<string, string | number>;
}

/**
 * PgBouncer in transaction mode in front of the server in `databaseUrl`, for every database on
 * it. Only what a deployment must set is set: where to listen, how to authenticate, the mode.
 * Everything else (default_pool_size 20, no ignore_startup_parameters, ...) is PgBouncer's default.
 */
export async function startPgbouncer(opts: PoolerOptions): Promise<Pooler> {
  const server = new URL(opts.databaseUrl);
  const port = opts.port || (await freePort());
  await assertPortFree(port, "pgbouncer");
  const user = decodeURIComponent(server.username || "postgres");
  const password = decodeURIComponent(server.password);
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  const authFile = join(dir, "users.txt");
  // With a password, clients must present it (SCRAM) and PgBouncer logs in to the server with it.
  writeFileSync(authFile, `"${user}" "${password.replaceAll('"', '""')}"\n`, { mode: 0o600 });
  const settings: Record<string, string | number> = {
    listen_addr: "127.0.0.1",
    listen_port: port,
    unix_socket_dir: "",
    auth_type: password ? "scram-sha-256" : "trust",
    auth_file: authFile,
    pool_mode: "transaction",
    ...opts.settings,
  };
  const ini = [
    "[databases]",
    `* = host=${server.hostname} port=${server.port || 5432}`,
    "[pgbouncer]",
    ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
  ].join("\n");
  const config = join(dir, "pgbouncer.ini");
  writeFileSync(config, `${ini}\n`, { mode: 0o600 });
  // PgBouncer refuses to run as root; it reads its config first, then switches user.
  const asUser = process.getuid?.() === 0 ? ["-u", unprivilegedUser()] : [];
  const proc = startGuarded("pgbouncer", opts.binary, [...asUser, config]);
  const cleanup = async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, proc);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`pgbouncer on port ${port}: ${error instanceof Error ? error.message : error}`);
  }
  const url = new URL(opts.databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return { url: url.toString(), port, pid: proc.pid, stop: cleanup };
}

function unprivilegedUser(): string {
  return spawnSync("id", ["-u", "postgres"], { stdio: "ignore" }).status === 0 ? "postgres" : "nobody";
}

/**
 * The pgbouncer binary for tests and `npm test`: TEST_POOLER=pgbouncer requires it (CI),
 * `off` never uses it, unset uses it when installed, so a machine with only Node still passes.
 */
export function pgbouncerForTests(): string | null {
  const mode = process.env.TEST_POOLER || "auto";
  if (mode === "off") return null;
  const binary = findBinary("pgbouncer");
  if (!binary && mode === "pgbouncer")
    throw new Error("TEST_POOLER=pgbouncer but pgbouncer is not installed: apt-get install -y pgbouncer");
  if (mode !== "auto" && mode !== "pgbouncer")
    throw new Error(`TEST_POOLER must be pgbouncer, off or unset, not ${mode}`);
  return binary;
}

export const NO_PGBOUNCER_REASON = "skipped: pgbouncer is not installed (apt-get install -y pgbouncer)";
