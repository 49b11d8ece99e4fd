// Issue 37: the production stack as a platform starts and stops it. `npm start` and the entry
// points of the image (Dockerfile: the standalone server.js, dist/*.mjs), each paid through and
// then stopped by SIGTERM to the one process a platform signals, with a slow payment in flight.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { freePort } from "../scripts/lib/guarded-process";
import { LOCKED_ROLES, lockedUrl } from "../scripts/lib/locked-roles";
import {
  alive,
  cleanEnv,
  descendants,
  exitTimes,
  getFresh,
  liveApiKey,
  orderAndPay,
  ROOT,
  type Started,
  startProcess,
  stockCatalog,
} from "./deploy-helpers";

const GRACE_MS = 30_000;
const secret = () => randomBytes(32).toString("base64url");
const running: Started[] = [];
test.afterEach(() => {
  for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
});

/**
 * SIGTERM while a slow payment (2 s at the provider) is in flight; readiness is polled on new
 * connections meanwhile. The payment must answer 200, readiness must answer 503 and then refuse.
 */
async function stopWithPaymentInFlight(base: string, apiKey: string, target: number) {
  const { payment } = await orderAndPay(base, apiKey, "pm_card_slow");
  await new Promise((r) => setTimeout(r, 300));
  const signalledAt = Date.now();
  process.kill(target, "SIGTERM");
  const readiness: (number | string)[] = [];
  for (const end = Date.now() + 10_000; Date.now() < end; ) {
    const answer = await getFresh(`${base}/api/health/ready`);
    readiness.push(answer);
    if (typeof answer === "string") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const paid = await payment;
  expect(paid.status, paid.body).toBe(200);
  // A first answer may come before the signal has made its way through npm and the launcher.
  const afterSignal = readiness.slice(readiness.findIndex((answer) => answer !== 200));
  expect(readiness.indexOf(200), `readiness: ${readiness}`).toBeLessThan(2);
  expect(afterSignal[0], `readiness: ${readiness}`).toBe(503);
  expect(afterSignal).not.toContain(200);
  expect(afterSignal.at(-1)).toBe("ECONNREFUSED");
  return { signalledAt, paid };
}

test("npm start: SIGTERM to its own process lets the payment in flight answer 200, then stops app, provider and database in order", async ({
  page,
}) => {
  test.setTimeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), "deploy-npm-start-"));
  chmodSync(dir, 0o755); // the postgres user must reach the data directory when we are root
  try {
    const port = await freePort();
    const pgPort = await freePort();
    const npm = await startProcess("npm", ["start"], {
      env: cleanEnv({
        ADMIN_TOKEN: secret(),
        SESSION_SECRET: secret(),
        PORT: String(port),
        EMBEDDED_PG_PORT: String(pgPort),
        EMBEDDED_PG_DIR: join(dir, "pg"),
        PROVIDER_PORT: String(await freePort()),
        SHUTDOWN_DELAY_SECONDS: "1",
        LOG_LEVEL: "warn",
      }),
      ready: /Ready in/,
    });
    running.push(npm);
    const base = `http://127.0.0.1:${port}`;
    await expect.poll(() => getFresh(`${base}/api/health/ready`), { timeout: 30_000 }).toBe(200);
    const npmPid = npm.child.pid as number;
    const tree = descendants(npmPid);
    const pidOf = (what: RegExp) => {
      const found = tree.find((p) => what.test(p.command));
      if (!found) throw new Error(`no ${what} among ${JSON.stringify(tree)}`);
      return found.pid;
    };
    const app = pidOf(/next/);
    const provider = pidOf(/provider\/main\.ts/);
    const database = pidOf(/postgres.* -D /);

    // The operator's way in: the app role's password from the 0600 file beside the data.
    const credentials = JSON.parse(readFileSync(join(dir, "pg.credentials.json"), "utf8"));
    await stockCatalog(lockedUrl(pgPort, LOCKED_ROLES.app, credentials.app, LOCKED_ROLES.app));
    const apiKey = await liveApiKey(page, base);
    const { signalledAt, paid } = await stopWithPaymentInFlight(base, apiKey, npmPid);
    const gone = await exitTimes([app, provider, database, npmPid, ...tree.map((p) => p.pid)], GRACE_MS);
    const at = (pid: number) => (gone.get(pid) ?? Number.NaN) - signalledAt;
    console.log(
      `[npm start stop] payment answered +${paid.at - signalledAt} ms; exited: app +${at(app)} ms, ` +
        `provider +${at(provider)} ms, database +${at(database)} ms, npm +${at(npmPid)} ms`,
    );
    expect(paid.at).toBeLessThanOrEqual(gone.get(app) ?? 0);
    expect(at(app)).toBeLessThanOrEqual(at(provider));
    expect(at(provider)).toBeLessThanOrEqual(at(database));
    expect(Math.max(...gone.values()) - signalledAt).toBeLessThan(GRACE_MS);
    expect((await npm.exited).code, npm.output()).toBe(0);
    expect(npm.output()).toMatch(/stopped: payment provider[\s\S]*stopped: database/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the image's entry points: migrate, provider, worker and the standalone server serve the checkout, pay, and stop on SIGTERM", async ({
  page,
}) => {
  test.setTimeout(300_000);
  const serverUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!serverUrl) throw new Error("DATABASE_URL is not set: run the e2e suite through `npm test`");
  const name = `deploy_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client(serverUrl);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).href;
  try {
    // The release step, as compose.yaml's `migrate` service runs it.
    const migrate = spawnSync("node", ["dist/migrate.mjs"], {
      cwd: ROOT,
      env: cleanEnv({ DATABASE_URL: databaseUrl }),
      encoding: "utf8",
    });
    expect(migrate.status, migrate.stderr).toBe(0);
    await stockCatalog(databaseUrl);

    const providerSecret = `sk_live_${secret()}`;
    const providerPort = await freePort();
    const provider = await startProcess("node", ["dist/provider.mjs"], {
      env: cleanEnv({
        APP_ENV: "production",
        PROVIDER_SECRET: providerSecret,
        PROVIDER_DATABASE_URL: databaseUrl,
        PROVIDER_PORT: String(providerPort),
      }),
      ready: /provider listening/,
    });
    running.push(provider);
    const appEnv = {
      APP_ENV: "production",
      NODE_ENV: "production",
      ADMIN_TOKEN: secret(),
      SESSION_SECRET: secret(),
      DATABASE_URL: databaseUrl,
      PAYMENT_PROVIDER_URL: `http://127.0.0.1:${providerPort}`,
      PAYMENT_PROVIDER_SECRET: providerSecret,
      LOG_LEVEL: "warn",
    };
    const port = await freePort();
    const server = await startProcess("node", ["server.js"], {
      cwd: join(ROOT, ".next", "standalone"),
      env: cleanEnv({
        ...appEnv,
        PORT: String(port),
        HOSTNAME: "127.0.0.1",
        BACKGROUND_JOBS: "off",
        SHUTDOWN_DELAY_SECONDS: "1",
      }),
      ready: /Ready in/,
    });
    running.push(server);
    const worker = await startProcess("node", ["dist/worker.mjs"], {
      env: cleanEnv(appEnv),
      ready: /worker running/,
    });
    running.push(worker);
    // No tsx and no project node_modules at run time: what the image holds is what runs.
    for (const p of [provider, server, worker])
      expect(
        descendants(p.child.pid as number)
          .map((c) => c.command)
          .join(" "),
      ).not.toMatch(/tsx/);

    const base = `http://127.0.0.1:${port}`;
    const home = await fetch(base);
    expect(home.status).toBe(200);
    const script = /src="(\/_next\/static\/[^"]+\.js)"/.exec(await home.text())?.[1];
    expect(script, "the page names its scripts").toBeDefined();
    expect((await fetch(`${base}${script}`)).status).toBe(200);

    const apiKey = await liveApiKey(page, base);
    const { signalledAt, paid } = await stopWithPaymentInFlight(base, apiKey, server.child.pid as number);
    const exited = await server.exited;
    console.log(
      `[standalone stop] payment answered +${paid.at - signalledAt} ms; server exited +${exited.at - signalledAt} ms (code ${exited.code})`,
    );
    expect(exited.at - signalledAt).toBeLessThan(GRACE_MS);
    expect(paid.at).toBeLessThanOrEqual(exited.at);
    expect([0, 143]).toContain(exited.code);

    worker.child.kill("SIGTERM");
    expect((await worker.exited).code, worker.output()).toBe(0);
    provider.child.kill("SIGTERM");
    expect((await provider.exited).code, provider.output()).toBe(0);
    expect(alive(server.child.pid as number)).toBe(false);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});
