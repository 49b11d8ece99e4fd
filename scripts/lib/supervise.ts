import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Stack } from "./stack";

const WATCHDOG = fileURLToPath(new URL("./die-with-parent.cjs", import.meta.url));

/**
 * Runs a command with the stack's environment, forwards SIGINT/SIGTERM to it, and stops the
 * stack when it ends; exits with the command's code. Children die with us even after a SIGKILL.
 */
export function runWithStack(
  stack: Stack,
  command: string,
  args: string[],
  extraEnv: Record<string, string> = {},
) {
  // The socket's peer is appended by the app itself (instrumentation.ts), whatever starts it.
  const nodeOptions = [process.env.NODE_OPTIONS, `--require ${WATCHDOG}`].filter(Boolean).join(" ");
  const child = spawn(command, args, {
    stdio: "inherit",
    env: { ...process.env, ...stack.env, ...extraEnv, NODE_OPTIONS: nodeOptions },
  });
  let shuttingDown = false;
  const forward = (signal: NodeJS.Signals) => {
    shuttingDown = true;
    child.kill(signal);
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  child.on("exit", (code, signal) => {
    // Next exits 128 + the signal's number when it stopped as asked: a clean stop for a supervisor.
    const asked = shuttingDown && (signal !== null || (code !== null && code > 128));
    void stack.stop().finally(() => process.exit(asked ? 0 : (code ?? (signal ? 0 : 1))));
  });
}
