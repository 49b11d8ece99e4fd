import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export type DebianTool = "pgbouncer" | "haproxy";

/** The Debian package's binary (sbin, so often not on a user's PATH), or null. */
export function findBinary(tool: DebianTool): string | null {
  for (const dir of ["/usr/sbin", "/usr/local/sbin", "/usr/bin", ...(process.env.PATH ?? "").split(":")]) {
    if (dir && existsSync(`${dir}/${tool}`)) return `${dir}/${tool}`;
  }
  return null;
}

/**
 * The binaries of the given packages, installed with apt-get when missing and we are root (as
 * .ci/run installs Chromium); otherwise an error that says which command to run.
 */
export function requireBinaries(tools: DebianTool[]): Record<DebianTool, string> {
  const missing = tools.filter((t) => !findBinary(t));
  if (missing.length > 0) {
    const install = ["apt-get", "install", "-y", ...missing];
    if (process.getuid?.() !== 0 || !findAptGet()) {
      throw new Error(`${missing.join(" and ")} not installed: run \`sudo ${install.join(" ")}\``);
    }
    console.log(`installing ${missing.join(", ")} with apt-get`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update"], { stdio: "inherit", env });
    execFileSync(install[0] as string, install.slice(1), { stdio: "inherit", env });
  }
  return Object.fromEntries(
    tools.map((t) => {
      const path = findBinary(t);
      if (!path) throw new Error(`${t} is still missing after apt-get install`);
      return [t, path];
    }),
  ) as Record<DebianTool, string>;
}

function findAptGet(): boolean {
  return spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
}
