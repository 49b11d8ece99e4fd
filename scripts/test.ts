import { spawnSync } from "node:child_process";
import { ensureBrowser, thisMachine } from "./lib/browser";
import { pgbouncerForTests } from "./lib/pgbouncer";
import { startStack } from "./lib/stack";

/**
 * `npm test`: a browser for the e2e step (found, downloaded or installed first, so a machine
 * without one fails in seconds with the command to run), lint, typecheck, then the unit and integration tests and the browser suite against
 * one real database and provider (embedded and started here unless DATABASE_URL /
 * PAYMENT_PROVIDER_URL are set). Stops at the first failing step.
 */
const timings: string[] = [];
function step(name: string, command: string, args: string[], env: Record<string, string> = {}): void {
  const started = Date.now();
  console.log(`\n▶ ${name}: ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  timings.push(`${name} ${seconds}s`);
  if (result.status !== 0) {
    console.error(`\n✖ ${name} failed (exit ${result.status ?? result.signal}) after ${seconds}s`);
    throw new StepFailed();
  }
}
class StepFailed extends Error {}

const bin = (name: string) => `node_modules/.bin/${name}`;
let exitCode = 0;
try {
  const browser = ensureBrowser(thisMachine);
  if (!browser.ok) {
    console.error(`\n✖ ${browser.message}`);
    throw new StepFailed();
  }
  step("lint", "npm", ["run", "--silent", "lint"]);
  step("typecheck", bin("tsc"), ["--noEmit", "-p", "."]);
  // Through PgBouncer in transaction mode whenever it is installed (CI requires it): the shape a
  // deployment has. Without it (a machine with only Node) the suite talks to PostgreSQL directly.
  const pgbouncer = pgbouncerForTests();
  if (!pgbouncer) console.log("pgbouncer is not installed: the tests talk to PostgreSQL directly");
  const stack = await startStack("test", {
    pgbouncer,
    pgbouncerPort: Number(process.env.PGBOUNCER_PORT ?? 0),
    // Vitest runs files in parallel, each with its pools, processes and interactive transactions:
    // PgBouncer's default of 20 server connections per database starves them (measured: hooks
    // timing out waiting to log in). A deployment sizes this to its instances the same way.
    pgbouncerSettings: { default_pool_size: 60, max_client_conn: 500 },
  });
  try {
    step("unit + integration", bin("vitest"), ["run"], stack.env);
    step("e2e", bin("playwright"), ["test"], stack.env);
  } finally {
    await stack.stop();
  }
} catch (error) {
  if (!(error instanceof StepFailed)) console.error(error);
  exitCode = 1;
}
console.log(`\n${exitCode === 0 ? "✔ all passed" : "✖ failed"}: ${timings.join(", ")}`);
process.exit(exitCode);
