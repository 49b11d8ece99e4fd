import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { applyMigrations } from "../server/db/migrate";

// `next start` run directly, as a platform or a Dockerfile runs it: the suite's production build,
// no start script, no preload, no APP_ENV, only the secrets and a database of its own. Production
// must be what it gets (decision 0145): development's credentials refused, HSTS, and the socket's
// address counted whatever X-Forwarded-For a client sends.

const PORT = Number(process.env.E2E_PORT ?? 3100) + 2;
const BASE = `http://127.0.0.1:${PORT}`;
const ADMIN_TOKEN = randomBytes(32).toString("base64url");
const METRICS_TOKEN = randomBytes(32).toString("base64url");
const RESERVED = "operators@operators.invalid";

let server: ChildProcess | undefined;
let databaseUrl = "";
let output = "";

/** A database beside the suite's, migrated, for this server alone. */
async function freshDatabase(): Promise<string> {
  const base = process.env.DIRECT_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("DATABASE_URL is not set: the next start spec makes its database beside it.");
  const url = new URL(base);
  const name = `${url.pathname.slice(1) || "postgres"}_next_start`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  url.pathname = `/${name}`;
  await applyMigrations(url.toString());
  return url.toString();
}

async function query<T>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** `next start` with nothing a start script would have set: no stage, preload, provider or pooler. */
function nextStart(port: number, vars: Record<string, string>): ChildProcess {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of [
    "APP_ENV",
    "NODE_ENV",
    "NODE_OPTIONS",
    "TRUSTED_PROXY_HOPS",
    "PAYMENT_PROVIDER_URL",
    "DIRECT_DATABASE_URL",
    "CHECKOUT_INSTANCE",
    "ADMIN_TOKEN",
    "SESSION_SECRET",
    "METRICS_TOKEN",
  ])
    delete env[name];
  return spawn("node_modules/.bin/next", ["start", "--port", String(port), "--hostname", "127.0.0.1"], {
    // Next's types make NODE_ENV required; leaving it unset is the point (next start sets it).
    env: { ...env, LOG_LEVEL: "warn", ...vars } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

test.beforeAll(async () => {
  test.setTimeout(120_000);
  databaseUrl = await freshDatabase();
  const child = nextStart(PORT, {
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    METRICS_TOKEN,
    SESSION_SECRET: randomBytes(32).toString("base64url"),
  });
  server = child;
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`next start exited:\n${output}`);
    const ready = await fetch(`${BASE}/api/health/live`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`next start did not answer within a minute:\n${output}`);
});

test.afterAll(() => {
  server?.kill("SIGTERM");
});

test("refuses to start without the secrets, so admin_test and metrics_test are never the defaults", async () => {
  const child = nextStart(PORT + 1, { DATABASE_URL: databaseUrl });
  let said = "";
  child.stdout?.on("data", (d: Buffer) => (said += d));
  child.stderr?.on("data", (d: Buffer) => (said += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(code).not.toBe(0);
  expect(said).toMatch(/ADMIN_TOKEN: is required[\s\S]*SESSION_SECRET: is required/);
});

test("is production: development credentials refused, no demo sign-in, HSTS", async ({ page, request }) => {
  const admin = await request.get(`${BASE}/api/trpc/admin.keys.counts`, {
    headers: { authorization: "Bearer admin_test" },
  });
  expect(admin.status()).toBe(401);
  const scrape = await request.get(`${BASE}/api/metrics`, {
    headers: { authorization: "Bearer metrics_test" },
  });
  expect(scrape.status()).toBe(401);
  // The scheme's case does not matter: the real metrics token in lower-case `bearer` is served.
  const lower = await request.get(`${BASE}/api/metrics`, {
    headers: { authorization: `bearer ${METRICS_TOKEN}` },
  });
  expect(lower.status()).toBe(200);
  const response = await page.goto(`${BASE}/signin`);
  expect(response?.headers()["strict-transport-security"]).toMatch(/max-age=\d+/);
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Demo customers" })).toHaveCount(0);
});

test("sign-up refuses the operators' address: the account exists before anyone can sign up", async ({
  page,
}) => {
  await page.goto(`${BASE}/signup`);
  await page.getByLabel("Email").fill(RESERVED);
  await page.getByLabel("Password").fill("correct horse battery staple");
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/That address is reserved/);
  const rows = await query<{ handle: string }>("SELECT handle FROM accounts WHERE email = $1", [RESERVED]);
  expect(rows).toEqual([{ handle: "operators" }]);
});

// Last: it leaves 127.0.0.1 throttled for the admin token on this server.
test("counts the socket's address whatever X-Forwarded-For says; a throttled admin sign-in is audited", async ({
  page,
  request,
}) => {
  for (let i = 0; i < 10; i++) {
    const res = await request.get(`${BASE}/api/trpc/admin.keys.counts`, {
      headers: { authorization: `Bearer wrong-${i}`, "x-forwarded-for": `203.0.113.${i + 1}` },
    });
    expect(res.status()).toBe(401);
  }
  // A fresh made-up address buys nothing: the right token is refused to this socket now.
  const right = await request.get(`${BASE}/api/trpc/admin.keys.counts`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-forwarded-for": "198.51.100.77" },
  });
  expect(right.status()).toBe(401);
  const counters = await query<{ key: string }>(
    "SELECT key FROM rate_limits WHERE key LIKE 'admin_token_ip:%'",
  );
  expect(counters).toEqual([{ key: "admin_token_ip:127.0.0.1" }]);

  await page.goto(`${BASE}/admin/signin`);
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("p[role=alert]")).toHaveText(/Too many wrong tokens from this address/);
  const audit = await query<{ action: string; outcome: string; address: string }>(
    "SELECT action, outcome, address FROM admin_audit_events WHERE action = 'refused signin'",
  );
  expect(audit).toEqual([{ action: "refused signin", outcome: "throttled", address: "127.0.0.1" }]);
  const bearer = await query<{ n: number }>(
    "SELECT count(*)::int AS n FROM admin_audit_events WHERE action = 'refused bearer' AND address = '127.0.0.1'",
  );
  expect(bearer[0]?.n).toBeGreaterThanOrEqual(11);
});
