/**
 * Crash points for the recovery tests: a process started with CHECKOUT_FAILPOINTS=name kills
 * itself with SIGKILL when it reaches that point, as a power cut would. Never in production.
 */
export function failpoint(name: string): void {
  const enabled = process.env.CHECKOUT_FAILPOINTS;
  if (!enabled || process.env.APP_ENV === "production") return;
  if (enabled.split(",").includes(name)) process.kill(process.pid, "SIGKILL");
}
