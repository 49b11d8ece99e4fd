import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer } from "node:net";

export interface GuardedProcess {
  pid: number;
  /** The last 16 KB of its output, for error messages. */
  output(): string;
  /** Resolves once it has exited (by stop() or by itself). */
  exited: Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s; idempotent. */
  stop(): Promise<void>;
}

// A non-Node daemon cannot watch our pid the way die-with-parent.cjs does for Node children, so a
// shell stands between: it ends the daemon when we are gone, even after a SIGKILL of Node.
const WATCH_PARENT = `
"$@" &
child=$!
trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT
while kill -0 "$GUARD_PARENT" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1 & wait $!; done
kill -TERM $child 2>/dev/null
wait $child`;

/** Starts a daemon in the foreground that dies with this process; `name` prefixes its output. */
export function startGuarded(name: string, command: string, args: string[]): GuardedProcess {
  const child: ChildProcess = spawn("sh", ["-c", WATCH_PARENT, name, command, ...args], {
    env: { ...process.env, GUARD_PARENT: String(process.pid) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-16 * 1024);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killOnExit = () => child.kill("SIGTERM");
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    output: () => output,
    exited,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/** Waits until something accepts TCP connections on the port, or the process has exited. */
export async function waitForPort(port: number, proc: GuardedProcess, timeoutMs = 10_000): Promise<void> {
  let gone = false;
  void proc.exited.then(() => {
    gone = true;
  });
  for (const deadline = Date.now() + timeoutMs; ; ) {
    if (await accepts(port)) return;
    if (gone || Date.now() > deadline) {
      await proc.stop();
      const why = gone ? "exited" : `did not listen on ${port} within ${timeoutMs} ms`;
      throw new Error(`${why}; its output:\n${proc.output().trim() || "(none)"}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Fails when something already listens on the port (a leftover from an earlier run, say). */
export async function assertPortFree(port: number, what: string): Promise<void> {
  if (await accepts(port)) throw new Error(`port ${port} for ${what} is already in use`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
