import { stageOf } from "./env";

/**
 * Crash points for the recovery tests: a process started with CHECKOUT_FAILPOINTS=name kills
 * itself with SIGKILL when it reaches that point, as a power cut would; `name@0.05` does so at
 * random, on 5% of passes (the soak tests). Never in production.
 */
export function failpoint(name: string): void {
  const enabled = process.env.CHECKOUT_FAILPOINTS;
  // The stage as server/env decides it: NODE_ENV=production alone is production.
  if (!enabled || stageOf(process.env) === "production") return;
  for (const entry of enabled.split(",")) {
    const [point, probability] = entry.split("@");
    if (point === name && (probability === undefined || Math.random() < Number(probability)))
      process.kill(process.pid, "SIGKILL");
  }
}
