import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcStat {
  ppid: number;
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** The pids of a process and all its descendants, now. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (!stat) continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * CPU time (user + system, ms) of a process tree. Exited children are counted through their
 * parent's cutime only when reaped, so long-lived servers (Next, Postgres backends) are read live.
 */
export function cpuMs(root: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of processTree(root)) {
    const stat = readStat(pid);
    if (stat) out.set(pid, (stat.ticks * 1000) / TICKS_PER_SECOND);
  }
  return out;
}

/** CPU ms spent between two readings, counting processes that appeared in between from zero. */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}
