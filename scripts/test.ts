import { spawn } from "node:child_process";
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
/**
 * Runs one step. Asynchronously on purpose: the stack's processes (PgBouncer, the provider) write
 * their output into pipes this process reads; a blocked event loop (spawnSync) lets a pipe fill,
 * and PgBouncer then stops in the middle of a write with every test's connection waiting on it.
 */
async function step(name: string, command: string, args: string[], env: Record<string, string> = {}) {
  const started = Date.now();
  console.log(`\n▶ ${name}: ${command} ${args.join(" ")}`);
  const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once("exit", (c, s) => resolve([c, s])),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  timings.push(`${name} ${seconds}s`);
  if (code !== 0) {
    console.error(`\n✖ ${name} failed (exit ${code ?? signal}) after ${seconds}s`);
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
  // The workspace packages' dist/, as `npm install` made it, brought up to date with their sources.
  await step("build packages", "npm", ["run", "--silent", "--workspaces", "--if-present", "build"]);
  await step("lint", "npm", ["run", "--silent", "lint"]);
  await step("typecheck", bin("tsc"), ["--noEmit", "-p", "."]);
  // Through PgBouncer in transaction mode whenever it is installed (CI requires it): the shape a
  // deployment has. Without it (a machine with only Node) the suite talks to PostgreSQL directly.
  const pgbouncer = pgbouncerForTests();
  if (!pgbouncer) console.log("pgbouncer is not installed: the tests talk to PostgreSQL directly");
  const stack = await startStack("test", {
    pgbouncer,
    pgbouncerPort: Number(process.env.PGBOUNCER_PORT ?? 0),
  });
  try {
    await step("unit + integration", bin("vitest"), ["run"], stack.env);
    await step("e2e", bin("playwright"), ["test"], stack.env);
  } finally {
    await stack.stop();
  }
} catch (error) {
  if (!(error instanceof StepFailed)) console.error(error);
  exitCode = 1;
}
console.log(`\n${exitCode === 0 ? "✔ all passed" : "✖ failed"}: ${timings.join(", ")}`);
process.exit(exitCode);
