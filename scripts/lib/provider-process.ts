/**
 * Starts the fake payment provider (provider/main.ts) as a child process, for
 * tests and scripts. The child watches our pid and exits if we die, even by SIGKILL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface ProviderProcess {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  pid: number;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

export interface StartProviderOptions {
  databaseUrl: string;
  /** Default 0: a random free port. */
  port?: number;
  /** Extra env for the child (e.g. PROVIDER_FAULTS, PROVIDER_SECRET). */
  env?: Record<string, string>;
  /** Default 15 000 ms. */
  readyTimeoutMs?: number;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const READY_LINE = /^provider listening on (http:\/\/127\.0\.0\.1:\d+)\s*$/;
const KILL_AFTER_MS = 5000;
const STDERR_KEEP = 16 * 1024;

export async function startProvider(opts: StartProviderOptions): Promise<ProviderProcess> {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 15_000;
  const child = spawn(process.execPath, ["--import", "tsx", "provider/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...opts.env,
      PROVIDER_DATABASE_URL: opts.databaseUrl,
      PROVIDER_PORT: String(opts.port ?? 0),
      PROVIDER_PARENT_PID: String(process.pid),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  // Normal parent exit (not SIGKILL): take the child with us.
  const killOnExit = () => {
    child.kill("SIGTERM");
  };
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));

  let stderr = "";
  let ready = false;
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (text: string) => {
    if (ready) process.stderr.write(prefixLines(text));
    else stderr = (stderr + text).slice(-STDERR_KEEP);
  });

  const url = await new Promise<string>((resolve, reject) => {
    if (pid === undefined) {
      child.once("error", (err) => reject(new Error(`cannot spawn the provider: ${err.message}`)));
      return;
    }
    let stdoutBuffer = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`provider not ready within ${readyTimeoutMs} ms${describeStderr(stderr)}`));
    }, readyTimeoutMs);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      // Let the last stderr chunk arrive before reporting it.
      setImmediate(() =>
        reject(
          new Error(
            `provider exited before it was ready (code ${code}, signal ${signal})${describeStderr(stderr)}`,
          ),
        ),
      );
    };
    child.once("exit", onExit);
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (text: string) => {
      if (ready) return;
      stdoutBuffer += text;
      for (const line of stdoutBuffer.split("\n")) {
        const match = READY_LINE.exec(line);
        if (match?.[1] !== undefined) {
          ready = true;
          clearTimeout(timer);
          child.off("exit", onExit);
          resolve(match[1]);
          return;
        }
      }
    });
  });

  let stopping: Promise<void> | undefined;
  return {
    url,
    pid: pid as number,
    stop: () => {
      stopping ??= stopChild(child, exited);
      return stopping;
    },
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  await exited;
  clearTimeout(timer);
}

function describeStderr(stderr: string): string {
  const text = stderr.trim();
  return text ? `; stderr:\n${text}` : " (no stderr output)";
}

function prefixLines(text: string): string {
  return text.replace(/^(?=.)/gm, "[provider] ");
}
