/**
 * Entry point of the payment provider simulator process (`npm run provider`).
 *
 * Env:
 *   PROVIDER_DATABASE_URL or DATABASE_URL  Postgres (schema payment_provider is created if missing)
 *   PROVIDER_PORT        port on 127.0.0.1 (default 4010; 0 = random free port)
 *   PROVIDER_FAULTS      random faults, e.g. "error:0.1,drop:0.1,latency:0-300" (see faults.ts)
 *   PROVIDER_SECRET      /v1/* requires "Authorization: Bearer <secret>"; unset: any sk_test_ key,
 *                        and unset with APP_ENV=production (the default under NODE_ENV=production) it does not start
 *   PROVIDER_HOST        the address it listens on (default 127.0.0.1; a container sets 0.0.0.0)
 *   PROVIDER_KEY_RETENTION_SECONDS  forget idempotency keys after this (default 86400, as Stripe)
 *   PROVIDER_SLOW_CARD_MS  how long pm_card_slow takes (default 2000)
 *   PROVIDER_WEBHOOK_URL   deliver every event there, signed (webhooks.ts); needs PROVIDER_WEBHOOK_SECRET (whsec_…)
 *   PROVIDER_WEBHOOK_FAULTS  random delivery faults, e.g. "duplicate:0.2,delay:0-500,reorder:0.5"
 *   PROVIDER_WEBHOOK_RETRY_MS  the first retry's wait after a failed delivery (default 1000; doubles)
 *   PROVIDER_PUBLIC_URL  the origin browsers reach this process at, for 3-D Secure pages (default: each API request's Host)
 *   PROVIDER_MERCHANT_NAME  the merchant a 3-D Secure page names (default "Idempotent Checkout")
 *   PROVIDER_AUTHORIZATION_TTL_SECONDS  cancel an authorization not captured within this (reason "automatic"); default off
 *   PROVIDER_PARENT_PID  if set, exit when that process is gone (checked every second)
 *
 * Prints exactly one line on stdout when ready: "provider listening on http://127.0.0.1:<port>".
 */
import type { AddressInfo } from "node:net";
import pg from "pg";
import { startAuthorizationExpiry } from "./authorization-expiry";
import { FaultSyntaxError, parseFaultEnv } from "./faults";
import { ensureSchema } from "./schema";
import { createProviderServer } from "./server";
import { parseWebhookFaults, startWebhookDelivery, type WebhookFaults } from "./webhooks";

const HOST = process.env.PROVIDER_HOST?.trim() || "127.0.0.1";
const DEFAULT_PORT = 4010;
const SHUTDOWN_GRACE_MS = 3000;

function fail(message: string): never {
  process.stderr.write(`provider: ${message}\n`);
  process.exit(1);
}

// A vanished parent closes our pipes; never crash on EPIPE while logging.
process.stdout.on("error", () => {});
process.stderr.on("error", () => {});

const secret = process.env.PROVIDER_SECRET || undefined;
const production =
  process.env.APP_ENV === "production" || (!process.env.APP_ENV && process.env.NODE_ENV === "production");
// Production takes only its own key: any sk_test_ key would let anyone on the network charge.
if (production && !secret)
  fail("PROVIDER_SECRET is required in production (e.g. sk_live_ + `openssl rand -base64 32`)");

const databaseUrl = process.env.PROVIDER_DATABASE_URL || process.env.DATABASE_URL;
if (!databaseUrl)
  fail("no database configured: set PROVIDER_DATABASE_URL (or DATABASE_URL) to a postgres:// URL");

const portText = process.env.PROVIDER_PORT?.trim() || String(DEFAULT_PORT);
const port = Number(portText);
if (!/^\d+$/.test(portText) || port > 65535)
  fail(`PROVIDER_PORT must be an integer 0-65535, got "${portText}"`);

const retentionText = process.env.PROVIDER_KEY_RETENTION_SECONDS?.trim() || "86400";
if (!/^\d+$/.test(retentionText) || Number(retentionText) < 1)
  fail(`PROVIDER_KEY_RETENTION_SECONDS must be a whole number of seconds >= 1, got "${retentionText}"`);
const keyRetentionSeconds = Number(retentionText);

const slowText = process.env.PROVIDER_SLOW_CARD_MS?.trim() || "2000";
if (!/^\d+$/.test(slowText) || Number(slowText) > 60_000)
  fail(`PROVIDER_SLOW_CARD_MS must be whole milliseconds 0-60000, got "${slowText}"`);
const slowCardMs = Number(slowText);

const publicUrl = process.env.PROVIDER_PUBLIC_URL?.trim().replace(/\/+$/, "") || undefined;
if (publicUrl && !/^https?:\/\/[^/?#]+$/.test(publicUrl))
  fail(`PROVIDER_PUBLIC_URL must be an origin such as http://localhost:4010, got "${publicUrl}"`);
const merchantName = process.env.PROVIDER_MERCHANT_NAME?.trim() || undefined;

const ttlText = process.env.PROVIDER_AUTHORIZATION_TTL_SECONDS?.trim() || undefined;
if (ttlText !== undefined && (!/^\d+$/.test(ttlText) || Number(ttlText) < 1))
  fail(`PROVIDER_AUTHORIZATION_TTL_SECONDS must be a whole number of seconds >= 1, got "${ttlText}"`);

let faults: ReturnType<typeof parseFaultEnv>;
try {
  faults = parseFaultEnv(process.env.PROVIDER_FAULTS);
} catch (err) {
  if (err instanceof FaultSyntaxError) fail(err.message);
  throw err;
}

// Spare connections kept five minutes rather than pg-pool's 10 s: a new backend per burst costs
// a fork and its first plans (as in server/db.ts).
const pool = new pg.Pool({
  connectionString: databaseUrl,
  max: 20,
  idleTimeoutMillis: 5 * 60_000,
  application_name: "payment-provider",
  // A database that stops answering (a lost primary, a half-open socket) fails a charge within
  // these bounds instead of holding it and its connection forever: the app retries the charge
  // with the same key. The same values as the app's pools (server/db.ts).
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
  connectionTimeoutMillis: 10_000,
  query_timeout: 35_000,
});
// The database ending an idle connection (its shutdown or restart, pg_terminate_backend) is not a
// failure: the pool drops it and opens another when asked. SQLSTATE 57P01-57P03, as server/db.ts.
const CLOSED_BY_SERVER = new Set(["57P01", "57P02", "57P03"]);
pool.on("error", (err) => {
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && CLOSED_BY_SERVER.has(code))
    process.stdout.write(`provider: the database closed an idle connection (${code})\n`);
  else process.stderr.write(`provider: idle database connection failed: ${err.message}\n`);
});

try {
  await ensureSchema(pool);
} catch (err) {
  const detail = err instanceof Error ? err.message : String(err);
  fail(
    `cannot prepare schema payment_provider in the database (PROVIDER_DATABASE_URL / DATABASE_URL): ${detail}`,
  );
}

const webhookUrl = process.env.PROVIDER_WEBHOOK_URL?.trim() || undefined;
const webhookSecret = process.env.PROVIDER_WEBHOOK_SECRET?.trim() || undefined;
if (webhookUrl && !/^https?:\/\//.test(webhookUrl))
  fail(`PROVIDER_WEBHOOK_URL must be an http(s) URL, got "${webhookUrl}"`);
if (webhookUrl && !webhookSecret?.startsWith("whsec_"))
  fail("PROVIDER_WEBHOOK_SECRET (whsec_…) is required with PROVIDER_WEBHOOK_URL: events are signed with it");
let webhookFaults: WebhookFaults;
try {
  webhookFaults = parseWebhookFaults(process.env.PROVIDER_WEBHOOK_FAULTS, "PROVIDER_WEBHOOK_FAULTS");
} catch (err) {
  if (err instanceof FaultSyntaxError) fail(err.message);
  throw err;
}
const retryText = process.env.PROVIDER_WEBHOOK_RETRY_MS?.trim() || "1000";
if (!/^\d+$/.test(retryText) || Number(retryText) < 1)
  fail(`PROVIDER_WEBHOOK_RETRY_MS must be whole milliseconds >= 1, got "${retryText}"`);
const webhooks =
  webhookUrl && webhookSecret
    ? startWebhookDelivery({
        pool,
        url: webhookUrl,
        secret: webhookSecret,
        faults: webhookFaults,
        retryBaseMs: Number(retryText),
        onError: (err) =>
          process.stderr.write(
            `provider: webhook delivery: ${err instanceof Error ? err.message : String(err)}\n`,
          ),
      })
    : null;

const server = createProviderServer({
  pool,
  faults,
  keyRetentionSeconds,
  secret,
  slowCardMs,
  publicUrl,
  merchantName,
  authorizationTtlSeconds: ttlText === undefined ? undefined : Number(ttlText),
  webhooks: webhooks ? { endpoints: 1, notify: webhooks.notify } : undefined,
});

const expiry =
  ttlText === undefined
    ? null
    : startAuthorizationExpiry({
        pool,
        ttlSeconds: Number(ttlText),
        recorder: { endpoints: webhooks ? 1 : 0 },
        notify: webhooks?.notify,
        onError: (err) =>
          process.stderr.write(
            `provider: authorization expiry: ${err instanceof Error ? err.message : String(err)}\n`,
          ),
      });

server.on("error", (err: NodeJS.ErrnoException) => {
  fail(err.code === "EADDRINUSE" ? `port ${port} is already in use (PROVIDER_PORT)` : err.message);
});

server.listen(port, HOST, () => {
  const { port: actual } = server.address() as AddressInfo;
  process.stdout.write(`provider listening on http://${HOST}:${actual}\n`);
});

let shuttingDown = false;
async function shutdown(reason: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  if (reason.startsWith("parent")) process.stderr.write(`provider: shutting down (${reason})\n`);
  const hardExit = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 1500);
  hardExit.unref();
  const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  force.unref();
  // Stop accepting; in-flight requests finish (their transactions commit or roll back).
  // Keep-alive sockets become idle once their in-flight request is answered: close them then.
  const reap = setInterval(() => server.closeIdleConnections(), 50);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  clearInterval(reap);
  await expiry?.stop();
  await webhooks?.stop();
  await pool.end().catch(() => {});
  process.exit(0);
}

process.once("SIGINT", () => void shutdown("SIGINT"));
process.once("SIGTERM", () => void shutdown("SIGTERM"));

// Die with the parent so no orphan survives a SIGKILLed test runner.
const parentPid = Number(process.env.PROVIDER_PARENT_PID);
if (Number.isInteger(parentPid) && parentPid > 0) {
  // If the parent spawned us directly, being re-parented means it died (immune to pid reuse).
  const directChild = process.ppid === parentPid;
  const watch = setInterval(() => {
    if (directChild && process.ppid !== parentPid) return void shutdown("parent process exited");
    try {
      process.kill(parentPid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ESRCH") void shutdown("parent process exited");
    }
  }, 1000);
  watch.unref();
}
