import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { findBinary } from "../scripts/lib/debian-package";
import { freePort } from "../scripts/lib/guarded-process";
import { LOCKED_ROLES, lockedUrl } from "../scripts/lib/locked-roles";
import {
  alive,
  cleanEnv,
  descendants,
  exitTimes,
  getFresh,
  imageBackends,
  liveApiKey,
  orderAndPay,
  ROOT,
  type Started,
  secret,
  startProcess,
  stockCatalog,
} from "./deploy-helpers";

const GRACE_MS = 30_000;
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
  const { env: appEnv, provider, drop } = await imageBackends(running);
  try {
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
    await drop();
  }
});

test("compose's edge: deploy/haproxy.cfg sends /api/ to the API tier (node dist/api.mjs) and the pages to the standalone server; a shopper signs up and pays through it", async ({
  page,
}) => {
  const haproxy = findBinary("haproxy");
  test.skip(
    !haproxy && process.env.TEST_POOLER !== "pgbouncer",
    "skipped: haproxy not installed (apt-get install -y haproxy)",
  );
  test.setTimeout(300_000);
  const { env: appEnv, drop } = await imageBackends(running);
  try {
    const [pagesPort, apiPort, edgePort] = [await freePort(), await freePort(), await freePort()];
    // As compose sets them: behind the edge, one proxy hop.
    const serverEnv = { ...appEnv, HOSTNAME: "127.0.0.1", BACKGROUND_JOBS: "off", TRUSTED_PROXY_HOPS: "1" };
    running.push(
      await startProcess("node", ["server.js"], {
        cwd: join(ROOT, ".next", "standalone"),
        env: cleanEnv({ ...serverEnv, PORT: String(pagesPort) }),
        ready: /Ready in/,
      }),
    );
    const api = await startProcess("node", ["dist/api.mjs"], {
      env: cleanEnv({ ...serverEnv, PORT: String(apiPort) }),
      ready: /api listening/,
    });
    running.push(api);
    const edge = await startProcess(haproxy as string, ["-W", "-db", "-f", "deploy/haproxy.cfg"], {
      env: cleanEnv({
        EDGE_BIND: `127.0.0.1:${edgePort}`,
        PAGES_ADDR: `127.0.0.1:${pagesPort}`,
        API_ADDR: `127.0.0.1:${apiPort}`,
      }),
      ready: /Loading success/,
    });
    running.push(edge);
    const base = `http://127.0.0.1:${edgePort}`;
    await expect
      .poll(async () => (await fetch(`${base}/api/health/ready`).catch(() => undefined))?.status, {
        timeout: 10_000,
      })
      .toBe(200);
    const home = await fetch(base);
    expect(home.status).toBe(200);
    expect(home.headers.get("x-served-by")).toMatch(/^app\d$/);
    expect((await fetch(`${base}/api/openapi.json`)).headers.get("x-served-by")).toMatch(/^api\d$/);
    expect(
      descendants(api.child.pid as number)
        .map((c) => c.command)
        .join(" "),
    ).not.toMatch(/tsx/);

    // The shopper's pages and their tRPC calls share the edge's origin; the key and the payment
    // are made through it, the payment answered by the API tier.
    const apiKey = await liveApiKey(page, base);
    const { payment } = await orderAndPay(base, apiKey, "pm_card_visa");
    const paid = await payment;
    expect(paid.status, paid.body).toBe(200);
    expect(JSON.parse(paid.body)).toMatchObject({ status: "succeeded", amount: 2500 });
  } finally {
    await drop();
  }
});
