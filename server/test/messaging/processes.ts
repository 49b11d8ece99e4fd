import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

export type Role = "relay" | "consumer";

export interface MessagingProcess {
  pid: number;
  /** The signal that ended it (SIGKILL for a failpoint) or its exit code. */
  exited: Promise<NodeJS.Signals | number | null>;
  stop(): Promise<void>;
}

/** The relay and/or consumer (messaging-process.ts) as a child process, resolved once ready. */
export async function startMessagingProcess(
  roles: Role[],
  env: Record<string, string> = {},
): Promise<MessagingProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "server/test/messaging/messaging-process.ts", roles.join(",")],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stderr?.on("data", (d) => {
    output += String(d);
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode ?? child.exitCode);
    else child.once("exit", (code, signal) => resolve(signal ?? code));
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`messaging process did not start:\n${output}`)), 30_000);
    child.stdout?.on("data", (d) => {
      output += String(d);
      if (output.includes("messaging ready")) {
        clearTimeout(timer);
        resolve();
      }
    });
    // A failpoint may fire before the ready line is read: that is still a started process.
    void exited.then((how) => {
      clearTimeout(timer);
      if (how === "SIGKILL") resolve();
      else reject(new Error(`messaging process exited with ${how} before it was ready:\n${output}`));
    });
  });
  return {
    pid: child.pid as number,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
