// Helpers of e2e/deploy.spec.ts: the deployed entry points as real processes, a production
// customer's API key made the way a shopper makes one, and a payment over REST.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { expect, type Page } from "@playwright/test";
import pg from "pg";
import { freePort } from "../scripts/lib/guarded-process";
import { createPrismaClient } from "../server/db";
import { demoProducts } from "../server/seed";

export const ROOT = new URL("..", import.meta.url).pathname;

/** The variables the test runner's own stack set, which a deployment of its own must not inherit. */
const STACK_VARIABLES =
  /^(APP_ENV|ADMIN_TOKEN|SESSION_SECRET|METRICS_TOKEN|DATABASE_URL|DIRECT_DATABASE_URL|PAYMENT_PROVIDER_URL|PAYMENT_PROVIDER_SECRET|PROVIDER_SECRET|CHECKOUT_INSTANCE|CHECKOUT_PARENT_PID|NODE_OPTIONS|NEXT_DIST_DIR|PORT|BACKGROUND_JOBS|DATABASE_PREPARED_STATEMENTS|NODE_ENV)$/;

export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([k]) => !STACK_VARIABLES.test(k));
  return { ...Object.fromEntries(kept), ...extra } as NodeJS.ProcessEnv;
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** Starts a process and waits for `ready` in its output. */
export async function startProcess(
  command: string,
  args: string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; ready: RegExp; timeoutMs?: number },
): Promise<Started> {
  const child = spawn(command, args, {
    cwd: opts.cwd ?? ROOT,
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const started = { child, output: () => output, exited };
  await expect
    .poll(
      () => (child.exitCode !== null ? `exited: ${output}` : opts.ready.test(output) ? "ready" : "starting"),
      {
        timeout: opts.timeoutMs ?? 120_000,
        intervals: [100],
      },
    )
    .toBe("ready");
  return started;
}

/** Every descendant of `pid` with its command line, read from /proc. */
export function descendants(pid: number): { pid: number; command: string }[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      // The parent is the 4th field, after the command in parentheses (which may hold spaces).
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: { pid: number; command: string }[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents)
      if (ppid === parent) {
        found.push({ pid: child, command: commandOf(child) });
        walk(child);
      }
  };
  walk(pid);
  return found;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie is gone for our purposes: its cmdline is empty.
    return commandOf(pid) !== "";
  } catch {
    return false;
  }
}

/** Polls until every pid is gone; returns when each went, or throws after `timeoutMs`. */
export async function exitTimes(list: number[], timeoutMs: number): Promise<Map<number, number>> {
  const pids = [...new Set(list)];
  const gone = new Map<number, number>();
  for (const end = Date.now() + timeoutMs; gone.size < pids.length; ) {
    for (const pid of pids) if (!gone.has(pid) && !alive(pid)) gone.set(pid, Date.now());
    if (Date.now() > end)
      throw new Error(`still running after ${timeoutMs} ms: ${pids.filter((p) => !gone.has(p))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return gone;
}

/** GET on a connection of its own (no pooled socket): a status, or the connection's error code. */
export function getFresh(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false, headers: { connection: "close" } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

/** A production shopper: sign up, sign in, and create an API key on the account page. */
export async function liveApiKey(page: Page, baseUrl: string): Promise<string> {
  const email = `deploy-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const password = "a long enough password 4 deploy";
  await page.goto(`${baseUrl}/signup`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await expect(page.getByRole("main").getByRole("status")).toContainText("Your account is ready");
  await page.goto(`${baseUrl}/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  await page.goto(`${baseUrl}/account`);
  await page.getByLabel("Key name").fill("deploy test");
  await page.getByRole("button", { name: "Create API key" }).click();
  const secret = (await page.getByLabel("New API key").textContent()) ?? "";
  expect(secret).toMatch(/^sk_live_/);
  return secret;
}

/** An order of one T-shirt; then its payment, not awaited, so a test can act while it runs. */
export async function orderAndPay(baseUrl: string, apiKey: string, paymentMethod: string) {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  const order = await fetch(`${baseUrl}/api/v1/orders`, {
    method: "POST",
    headers,
    body: JSON.stringify({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] }),
  });
  expect(order.ok, await order.clone().text()).toBe(true);
  const { id } = (await order.json()) as { id: string };
  const sentAt = Date.now();
  const payment = fetch(`${baseUrl}/api/v1/payments`, {
    method: "POST",
    headers: { ...headers, "idempotency-key": crypto.randomUUID() },
    body: JSON.stringify({ orderId: id, paymentMethod }),
  }).then(async (res) => ({ status: res.status, body: await res.text(), at: Date.now() }));
  return { sentAt, payment };
}

/** Production seeds nothing: the operator stocks the catalog (here the demo one) in the database. */
export async function stockCatalog(databaseUrl: string): Promise<void> {
  const prisma = createPrismaClient(databaseUrl);
  try {
    await prisma.product.createMany({
      data: demoProducts(),
      skipDuplicates: true,
    });
  } finally {
    await prisma.$disconnect();
  }
}

/**
 * What the image's servers stand on, as compose starts it: a database of its own migrated by
 * `node dist/migrate.mjs` (the release step), its catalog stocked, and `node dist/provider.mjs`.
 * `env` is the servers' production environment; `drop()` stops nothing, it drops the database.
 */
export async function imageBackends(running: Started[]) {
  const serverUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!serverUrl) throw new Error("DATABASE_URL is not set: run the e2e suite through `npm test`");
  const name = `deploy_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client(serverUrl);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
  try {
    const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).href;
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
    const env = {
      APP_ENV: "production",
      NODE_ENV: "production",
      ADMIN_TOKEN: secret(),
      SESSION_SECRET: secret(),
      DATABASE_URL: databaseUrl,
      PAYMENT_PROVIDER_URL: `http://127.0.0.1:${providerPort}`,
      PAYMENT_PROVIDER_SECRET: providerSecret,
      LOG_LEVEL: "warn",
    };
    return { env, provider, drop };
  } catch (error) {
    // A failed release step or provider start leaves no database behind.
    await drop();
    throw error;
  }
}

export const secret = () => randomBytes(32).toString("base64url");
