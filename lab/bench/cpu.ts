import { readdirSync, readFileSync } from "node:fs";

// CPU time of processes from /proc (Linux), in seconds, for the benchmark's CPU split.
const TICKS_PER_SECOND = 100;

interface Proc {
  pid: number;
  ppid: number;
  cpuSeconds: number;
  cmdline: string;
}

function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    return {
      pid,
      ppid: Number(fields[1]),
      cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
      cmdline,
    };
  } catch {
    return null; // gone meanwhile
  }
}

export function allProcesses(): Proc[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is Proc => p !== null);
}

/** CPU seconds used so far by the process and all its living descendants. */
export function treeCpuSeconds(root: number, procs = allProcesses()): number {
  const byParent = new Map<number, Proc[]>();
  for (const p of procs) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  let total = 0;
  const stack = procs.filter((p) => p.pid === root);
  while (stack.length > 0) {
    const p = stack.pop() as Proc;
    total += p.cpuSeconds;
    stack.push(...(byParent.get(p.pid) ?? []));
  }
  return total;
}

/** The postmaster listening on `port`, found by its command line (`postgres ... -p <port>`). */
export function postmasterOnPort(port: number, procs = allProcesses()): number | null {
  const found = procs.find((p) => /(^|\/)postgres /.test(p.cmdline) && p.cmdline.includes(` -p ${port}`));
  return found?.pid ?? null;
}
