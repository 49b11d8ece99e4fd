import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export type DebianTool = "pgbouncer" | "haproxy" | "patroni" | "etcd";

/** The package that installs each tool, where its name differs. */
const PACKAGE: Record<DebianTool, string> = {
  pgbouncer: "pgbouncer",
  haproxy: "haproxy",
  patroni: "patroni",
  etcd: "etcd-server",
};

/** Where Debian puts daemons (sbin, often not on a user's PATH), then the PATH. */
const searchPath = () => ["/usr/sbin", "/usr/local/sbin", "/usr/bin", ...(process.env.PATH ?? "").split(":")];

/** The Debian package's binary, or null. */
export function findBinary(tool: DebianTool, dirs: string[] = searchPath()): string | null {
  for (const dir of dirs) if (dir && existsSync(`${dir}/${tool}`)) return `${dir}/${tool}`;
  return null;
}

/**
 * The binaries of the given packages, installed with apt-get when missing and we are root (as
 * .ci/run installs Chromium); otherwise an error that says which command to run.
 */
export function requireBinaries(
  tools: DebianTool[],
  opts: { dirs?: string[]; canInstall?: boolean } = {},
): Record<DebianTool, string> {
  const find = (t: DebianTool) => findBinary(t, opts.dirs);
  const missing = tools.filter((t) => !find(t));
  if (missing.length > 0) {
    const install = ["apt-get", "install", "-y", ...missing.map((t) => PACKAGE[t])];
    if (!(opts.canInstall ?? (process.getuid?.() === 0 && hasAptGet()))) {
      throw new Error(`${missing.join(" and ")} not installed: run \`sudo ${install.join(" ")}\``);
    }
    console.log(`installing ${missing.join(", ")} with apt-get`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update"], { stdio: "inherit", env });
    execFileSync("apt-get", install.slice(1), { stdio: "inherit", env });
  }
  return Object.fromEntries(
    tools.map((t) => {
      const path = find(t);
      if (!path) throw new Error(`${t} is still missing after apt-get install`);
      return [t, path];
    }),
  ) as Record<DebianTool, string>;
}

function hasAptGet(): boolean {
  return spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
}
