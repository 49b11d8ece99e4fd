import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitForHealth } from "../../scripts/lib/health-wait";
import type { ReceiverSpec } from "./receiver-records";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WATCHDOG = fileURLToPath(new URL("../../scripts/lib/die-with-parent.cjs", import.meta.url));

/** One process of the deployment the checker may SIGKILL and start again. */
export interface Restartable {
  name: string;
  /** Up and answering (an app instance: healthy; the worker: started). */
  alive(): boolean;
  start(): Promise<void>;
  /** SIGKILL of its whole process group: no shutdown hook runs. */
  kill(): Promise<void>;
  /** SIGTERM, for the end of the run. */
  stop(): Promise<void>;
}

interface Spec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  logDir: string;
  /** Ready when this resolves. */
  ready(child: ChildProcess): Promise<void>;
}

/**
 * A child in a process group of its own, so that a kill reaches whatever it spawned too; its
 * output goes to a log file (the checker's own output stays a report). It also exits when the
 * checker dies (die-with-parent.cjs), even by SIGKILL.
 */
function restartable(spec: Spec): Restartable {
  let child: ChildProcess | null = null;
  let up = false;
  const exited = (c: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) resolve();
      else c.once("exit", () => resolve());
    });
  const signalGroup = (c: ChildProcess, signal: NodeJS.Signals) => {
    try {
      if (c.pid) process.kill(-c.pid, signal);
    } catch {
      // already gone
    }
  };
  return {
    name: spec.name,
    alive: () => up,
    async start() {
      const log = openSync(join(spec.logDir, `${spec.name}.log`), "a");
      const c: ChildProcess = spawn(spec.command, spec.args, {
        cwd: ROOT,
        detached: true,
        stdio: ["ignore", log, log],
        env: {
          ...(spec.env as NodeJS.ProcessEnv),
          CHECKOUT_PARENT_PID: String(process.pid),
          NODE_OPTIONS: [spec.env.NODE_OPTIONS, `--require ${WATCHDOG}`].filter(Boolean).join(" "),
        },
      });
      closeSync(log);
      child = c;
      c.once("exit", () => {
        if (child === c) up = false;
      });
      await Promise.race([
        spec.ready(c),
        exited(c).then(() => {
          throw new Error(`${spec.name} exited before it was ready (see ${spec.logDir}/${spec.name}.log)`);
        }),
      ]);
      up = true;
    },
    async kill() {
      const c = child;
      if (!c) return;
      up = false;
      signalGroup(c, "SIGKILL");
      await exited(c);
    },
    async stop() {
      const c = child;
      if (!c) return;
      up = false;
      signalGroup(c, "SIGTERM");
      const timer = setTimeout(() => signalGroup(c, "SIGKILL"), 5000);
      await exited(c);
      clearTimeout(timer);
    },
  };
}

/** Which server answers the API: `next start` on the production build, or the API tier (scripts/api.ts). */
export type Deployed = "next" | "api";

/** One server of the API, `next start` or the API tier's. */
export function appInstance(opts: {
  index: number;
  port: number;
  env: Record<string, string>;
  logDir: string;
  server: Deployed;
}): Restartable & { url: string; index: number } {
  const url = `http://127.0.0.1:${opts.port}`;
  const command =
    opts.server === "next"
      ? {
          command: "node_modules/.bin/next",
          args: ["start", "--port", String(opts.port), "--hostname", "127.0.0.1"],
        }
      : { command: process.execPath, args: ["--import", "tsx", "scripts/api.ts"] };
  const proc = restartable({
    name: `${opts.server === "next" ? "app" : "api"}-${opts.index}`,
    ...command,
    env: { ...opts.env, PORT: String(opts.port), HOSTNAME: "127.0.0.1" },
    logDir: opts.logDir,
    ready: () => waitForHealth(`${url}/api/health/ready`, 60_000),
  });
  return { ...proc, url, index: opts.index };
}

/** `npm run worker`: the background jobs alone. */
export function workerProcess(opts: { env: Record<string, string>; logDir: string }): Restartable {
  return restartable({
    name: "worker",
    command: process.execPath,
    args: ["--import", "tsx", "scripts/worker.ts"],
    env: opts.env,
    logDir: opts.logDir,
    // Its jobs start at once; the log says "worker running". A short pause stands for that line.
    ready: () => new Promise((r) => setTimeout(r, 1500)),
  });
}

/** A merchant's receivers (lab/chaos/receiver.ts) in a process of their own, so it can be SIGKILLed. */
export function receiverProcess(opts: {
  name: string;
  receivers: ReceiverSpec[];
  env: Record<string, string>;
  logDir: string;
}): Restartable {
  const first = opts.receivers[0];
  if (!first) throw new Error(`receiver process ${opts.name} has no receivers`);
  return restartable({
    name: opts.name,
    command: process.execPath,
    args: ["--import", "tsx", "lab/chaos/receiver.ts"],
    env: { ...opts.env, CHAOS_RECEIVERS: JSON.stringify(opts.receivers) },
    logDir: opts.logDir,
    ready: async () => {
      for (const r of opts.receivers) await waitForHealth(`http://127.0.0.1:${r.port}/ready`, 30_000);
    },
  });
}
