import { spawn } from "node:child_process";
import pg from "pg";

/**
 * Starts `npm start` (scripts/start.ts, on the build of the suite's first web server) on a fresh,
 * empty database beside the suite's (`<suite database>_<suffix>`), for a server of the e2e run
 * that must not share the suite's data. The database is made on a session of its own
 * (DIRECT_DATABASE_URL) when the tests run behind a pooler. This process lives as long as the
 * server and passes Playwright's signals on to it.
 */
export async function startServerBeside(
  suffix: string,
  env: Record<string, string>,
  /** Runs on the new database (its direct URL) before the server starts: a seed, say. */
  prepare?: (databaseUrl: string) => Promise<void>,
): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (!base)
    throw new Error(`DATABASE_URL is not set: the ${suffix} e2e server makes its database beside it.`);
  const url = new URL(base);
  const name = `${url.pathname.slice(1) || "postgres"}_${suffix}`;
  const direct = process.env.DIRECT_DATABASE_URL ? new URL(process.env.DIRECT_DATABASE_URL) : null;
  const admin = new pg.Client({ connectionString: (direct ?? url).toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  url.pathname = `/${name}`;
  if (direct) direct.pathname = `/${name}`;
  await prepare?.((direct ?? url).toString());

  const child = spawn("node_modules/.bin/tsx", ["scripts/start.ts"], {
    stdio: "inherit",
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      ...(direct ? { DIRECT_DATABASE_URL: direct.toString() } : {}),
      ...env,
    },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => child.kill(signal));
  child.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
