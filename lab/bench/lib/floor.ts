import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const DIR = fileURLToPath(new URL("../floor/", import.meta.url));

export interface FloorResult {
  clients: number;
  tps: number;
  latencyMs: number;
}

/**
 * The reference floor: pgbench running one payment's minimal SQL (bench/floor, a copy of the
 * team's reference script) on a small schema of its own, against the same PostgreSQL.
 * Undefined when pgbench is not installed.
 */
export function runFloor(url: string, clients: number, seconds: number): FloorResult | undefined {
  if (spawnSync("pgbench", ["--version"]).status !== 0) return undefined;
  const u = new URL(url);
  const env = { ...process.env, PGPASSWORD: decodeURIComponent(u.password) };
  const conn = ["-h", u.hostname, "-p", u.port || "5432", "-U", decodeURIComponent(u.username) || "postgres"];
  const db = u.pathname.slice(1);
  execFileSync("psql", [...conn, "-q", "-d", db, "-f", `${DIR}pgbench-schema.sql`], { env, stdio: "ignore" });
  const out = execFileSync(
    "pgbench",
    [
      ...conn,
      "-n",
      "-f",
      `${DIR}pgbench-payment.sql`,
      "-c",
      String(clients),
      "-j",
      String(Math.min(clients, 2)),
      "-T",
      String(seconds),
      db,
    ],
    { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
  const latencyMs = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1]);
  return { clients, tps, latencyMs };
}
