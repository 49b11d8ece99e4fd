/**
 * `npm run bench:http`: payments over HTTP against the production build (`next build` +
 * `next start`) with its provider process, beside a trivial query on the same server and the
 * pgbench floor on the same PostgreSQL, all in one run. Reports ratios: the machine is shared,
 * so absolute numbers drift between runs while ratios measured side by side hold.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startDatabase } from "../../scripts/lib/embedded-pg";
import { startProvider } from "../../scripts/lib/provider-process";
import { printApiTier, startApiTierBench } from "./lib/api-tier";
import { runFloor } from "./lib/floor";
import { closedLoop, httpClient, type LoadResult } from "./lib/load";
import { benchOrders } from "./lib/orders";
import { cpuDelta, cpuMs } from "./lib/proc";
import { type Sampler, startWaitSampler } from "./lib/sessions";
import { extraComparisons } from "./lib/variants";
import { deliveredRow, deliveryCostLines, webhookDeliveryRow } from "./lib/webhook-delivery";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PORT = Number(process.env.BENCH_PORT ?? 3315);
const PASSES = Number(process.env.BENCH_PASSES ?? 2);
const WARMUP_PASSES = Number(process.env.BENCH_WARMUP ?? 1);
const FLOOR_SECONDS = Number(process.env.BENCH_FLOOR_SECONDS ?? 8);
// BENCH_SIZE_SCALE (e.g. 0.1) shrinks every load, to check the report prints without a full run.
const SCALE = Number(process.env.BENCH_SIZE_SCALE ?? 1);
const SIZES = scaled({
  health: [200, 1000],
  charge: [100, 600],
  refund: [100, 600],
  capture: [100, 600],
  catalog: [200, 1000],
  fresh: [100, 600],
  replay: [200, 1000],
  conflict: [100, 400],
});
function scaled<T extends Record<string, number[]>>(sizes: T): T {
  const out: Record<string, number[]> = {};
  for (const [name, ns] of Object.entries(sizes))
    out[name] = ns.map((n) => Math.max(16, Math.round(n * SCALE)));
  return out as T;
}
const CLIENTS = [1, 16] as const;
const BENCH_DATABASES = ["checkout", "floor"];

const database = await startDatabase({
  instance: "test",
  root: join(ROOT, ".data", "bench"),
  databases: BENCH_DATABASES,
});
// The provider is another company's service: its database runs on a PostgreSQL server of its own,
// so that its charges' CPU and WAL are not read as ours (decision 0121). With DATABASE_URL set
// (an external server) it shares that server, as before.
const providerDatabase = await startDatabase({
  instance: "provider",
  root: join(ROOT, ".data", "bench"),
  databases: ["provider"],
  port: Number(process.env.BENCH_PROVIDER_PG_PORT ?? Number(new URL(database.url).port) + 1),
});
const providerSeparate = providerDatabase.embedded;
const dbUrl = (name: string, applicationName?: string) => {
  const u = new URL(database.url);
  u.pathname = `/${name}`;
  if (applicationName) u.searchParams.set("application_name", applicationName);
  return u.toString();
};
// The bench's own connections (setup, WAL and session counters, the wait sampler) are named so
// that their CPU is left out of the database's CPU per request: the observer is not the payment.
const OBSERVER = "bench-observer";
// Each run starts from empty databases: rows kept from earlier runs grow the indexes and the
// WAL a payment writes after each checkpoint, so numbers drifted from run to run (lab/bench/history.md,
// round five). BENCH_KEEP_DATA=1 keeps them.
if (database.embedded && process.env.BENCH_KEEP_DATA !== "1") {
  await recreateDatabases(database.url, BENCH_DATABASES);
  await recreateDatabases(providerDatabase.url, ["provider"]);
}
let postmasterPid: number | undefined;
if (database.embedded) postmasterPid = await enableStatementStats();
// The in-process variants use the app's modules, which read the environment once, on import
// (the payment limit's own pool among them): point them at the bench's database first.
process.env.DATABASE_URL = dbUrl("checkout");
process.env.RATE_LIMIT_PAYMENTS_PER_MINUTE ??= "1000000";
// As `npm start` runs with its embedded database (decision 0041); `off` measures the pooler's way.
process.env.DATABASE_PREPARED_STATEMENTS ||= "on";
process.env.RATE_LIMIT_ORDERS_PER_MINUTE ??= "1000000";
const { applyMigrations } = await import("../../server/db/migrate");
await applyMigrations(dbUrl("checkout"));
const { closeClient, createPrismaClient, newId } = await import("../../server/db");
const { seedDemoData } = await import("../../server/seed");
const seeding = createPrismaClient(dbUrl("checkout"));
await seedDemoData(seeding, { production: false });
await closeClient(seeding);
const admin = new pg.Pool({ connectionString: dbUrl("checkout", OBSERVER), max: 2, idleTimeoutMillis: 0 });
const stats =
  (await admin.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'")).rowCount === 1;

const providerDbUrl = providerSeparate ? providerDatabase.url : dbUrl("provider");
const providerPostmasterPid = providerSeparate ? await postmasterOf(providerDbUrl) : undefined;
const provider = await startProvider({
  databaseUrl: providerDbUrl,
  port: Number(process.env.PROVIDER_PORT ?? 0),
});
// The production build: `next build` and, after it, the bundles (the API tier's dist/api.mjs).
if (process.env.BENCH_BUILD !== "0")
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "ignore" });
else if (!existsSync(join(ROOT, "dist", "api.mjs")))
  execFileSync("npm", ["run", "--silent", "postbuild"], { cwd: ROOT, stdio: "ignore" });
const server = await startServer();
// Sockets for 16 clients and the 16 requests that hold keys in flight for the 409s.
const client = httpClient(`http://127.0.0.1:${PORT}`, 40);
const alice = "Bearer sk_test_alice";
// Imported here, after the environment above: the binding reads the app's environment on import.
const { httpProvider, UNSET_TEST_KEY } = await import("../../server/provider");
const PLAIN_SECRET = process.env.PAYMENT_PROVIDER_SECRET || UNSET_TEST_KEY;
const charges = httpProvider({ baseUrl: provider.url, timeoutMs: 10_000 });
const accountId = (await admin.query("SELECT id FROM accounts WHERE handle = 'alice'")).rows[0].id as string;

const orders = (n: number) => benchOrders(admin, accountId, n, newId);
const pay = (key: string, body: string) =>
  client.request("POST", "/api/trpc/payments.create", { authorization: alice, "idempotency-key": key }, body);
// The operators' credential: the server's ADMIN_TOKEN, its development default unless set.
const operator = `Bearer ${process.env.ADMIN_TOKEN ?? "admin_test"}`;
/** A whole refund of one payment, as the admin's Refund button sends it. */
const refund = (key: string, paymentId: string) =>
  client.request(
    "POST",
    "/api/trpc/admin.refunds.create",
    { authorization: operator, "idempotency-key": key },
    JSON.stringify({ paymentId, amountMinor: 2500, reason: "bench" }),
  );
/** A whole capture of one authorized payment, as the admin's Capture button sends it. */
const capture = (key: string, paymentId: string) =>
  client.request(
    "POST",
    "/api/trpc/admin.payments.capture",
    { authorization: operator, "idempotency-key": key },
    JSON.stringify({ id: paymentId }),
  );
/**
 * Fresh authorized payments (manual capture) of n new orders, made before a capture load and
 * not timed: each capture needs an authorization of its own.
 */
async function authorizations(n: number): Promise<string[]> {
  const ids = await orders(n);
  const made: string[] = [];
  await closedLoop(16, ids.length, async (k) => {
    const body = JSON.stringify({ orderId: ids[k], paymentMethod: "pm_card_visa", captureMethod: "manual" });
    const r = await pay(randomUUID(), body);
    const payment = (JSON.parse(r.body) as { result?: { data?: { id: string; status: string } } }).result
      ?.data;
    if (payment?.status === "authorized") made.push(payment.id);
    return payment?.status === "authorized";
  });
  if (made.length !== n) throw new Error(`authorized ${made.length} of ${n} payments`);
  return made;
}
/** The succeeded payments of these orders: what the refunds give back. */
async function paymentsOf(orderIds: string[]): Promise<string[]> {
  const { rows } = await admin.query(
    "SELECT id FROM payments WHERE order_id = ANY($1::uuid[]) AND status = 'succeeded'",
    [orderIds],
  );
  return rows.map((r) => r.id as string);
}
const payBody = (orderId: string, method = "pm_card_visa") =>
  JSON.stringify({ orderId, paymentMethod: method });

interface Measured extends LoadResult {
  top?: string[];
  /** BENCH_STATEMENTS=1: rows inserted, updated (of them HOT) and deleted per request, by table. */
  tables?: string[];
  /** BENCH_STATEMENTS=1: the load's WAL by resource manager, records and full-page images apart. */
  walKinds?: string[];
  /** BENCH_STATEMENTS=1: PostgreSQL's CPU ms per request by backend (database/application or type). */
  pgCpu?: Record<string, number>;
  cpu?: { server: number; postgres?: number; provider: number };
  statements?: { app: number; provider: number };
  waits?: { lock: number; walFlush: number; events: Record<string, number> };
  /** WAL written by the whole cluster (app, provider, jobs), per request. */
  walKb?: number;
  /** Backends started in the app's and the provider's databases during the load. */
  newSessions?: number;
}
const results: Record<string, Measured[]> = {};
const recordResult = (name: string, r: Measured) => {
  results[name] = [...(results[name] ?? []), r];
};

/** The cluster's WAL position in bytes: two reads apart, the WAL written between them. */
async function walBytes(): Promise<number> {
  const { rows } = await admin.query("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::float8 AS b");
  return rows[0].b as number;
}

/**
 * Backends ever started in the app's and the provider's databases. A pool that closes and
 * reopens connections under load pays a fork and fresh plans each time (decision 0047).
 */
async function sessionsStarted(): Promise<number> {
  const { rows } = await admin.query(
    "SELECT coalesce(sum(sessions), 0)::float8 AS n FROM pg_stat_database WHERE datname = ANY($1)",
    [["checkout", "provider"]],
  );
  return rows[0].n as number;
}

/** CPU ms of the provider: its process and, when it has a server of its own, its PostgreSQL. */
const providerCpu = () =>
  new Map([...cpuMs(provider.pid), ...(providerPostmasterPid ? cpuMs(providerPostmasterPid) : [])]);

/** The postmaster's pid of the server at `url` (its data directory's postmaster.pid). */
async function postmasterOf(url: string): Promise<number | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const dir = (await c.query("SHOW data_directory")).rows[0].data_directory as string;
    const pidFile = join(dir, "postmaster.pid");
    return existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : undefined;
  } finally {
    await c.end();
  }
}

/** CPU ms of the Next server's process tree, for `measured`. */
const serverCpu = () => cpuMs(server.pid as number);
/** This process: the load's client side (the SDK's work, or a plain request's). */
const benchCpu = () => cpuMs(process.pid);

/** A PaymentIntent created and confirmed with one form-encoded POST, no SDK: the SDK's baseline. */
async function plainCharge(): Promise<string> {
  const key = `bench_${randomUUID()}`;
  const res = await fetch(`${provider.url}/v1/payment_intents`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${PLAIN_SECRET}`,
      "content-type": "application/x-www-form-urlencoded",
      "idempotency-key": key,
    },
    body: new URLSearchParams({
      amount: "2500",
      currency: "eur",
      payment_method: "pm_card_visa",
      confirm: "true",
      "automatic_payment_methods[enabled]": "true",
      "automatic_payment_methods[allow_redirects]": "never",
      "metadata[idempotency_key]": key,
    }),
  });
  return ((await res.json()) as { status?: string }).status ?? String(res.status);
}
/**
 * CPU ms of this process, for the in-process comparisons: the app's code runs here, so their
 * "server" column is this process.
 */
const thisProcessCpu = () => {
  const used = process.cpuUsage();
  return new Map([[process.pid, (used.user + used.system) / 1000]]);
};

/**
 * Runs one load with CPU, statement, wait and WAL sampling around it; `appCpu` reads the CPU of
 * wherever the app's code runs (the server by default).
 */
async function measured(run: () => Promise<LoadResult>, appCpu = serverCpu): Promise<Measured> {
  // What earlier loads left to the background jobs (outbox relay, receipts) is done first, so
  // that it is not counted here; what this load leaves is waited for before reading the counters,
  // so that each payment is charged its own messaging.
  await messagingDrained();
  const before = {
    server: appCpu(),
    provider: providerCpu(),
    pg: postmasterPid ? cpuMs(postmasterPid) : undefined,
  };
  if (stats) await admin.query("SELECT pg_stat_statements_reset()");
  const tablesBefore = process.env.BENCH_STATEMENTS ? await tableWrites() : undefined;
  const walBefore = await walBytes();
  const lsnBefore = process.env.BENCH_STATEMENTS && postmasterPid ? await flushedLsn() : undefined;
  const sampler: Sampler = startWaitSampler(dbUrl("checkout", OBSERVER));
  const sessionsBefore = await sessionsStarted();
  const r = await run();
  await messagingDrained();
  const pgAfter = postmasterPid ? cpuMs(postmasterPid) : undefined;
  const observers = await observerPids();
  const notObserver = (m: Map<number, number>) => new Map([...m].filter(([pid]) => !observers.has(pid)));
  const newSessions = (await sessionsStarted()) - sessionsBefore;
  const waits = await sampler.stop();
  const per = (ms: number) => ms / r.requests;
  const out: Measured = {
    ...r,
    waits,
    newSessions,
    walKb: ((await walBytes()) - walBefore) / 1024 / r.requests,
    cpu: {
      server: per(cpuDelta(before.server, appCpu())),
      provider: per(cpuDelta(before.provider, providerCpu())),
      postgres:
        before.pg && pgAfter ? per(cpuDelta(notObserver(before.pg), notObserver(pgAfter))) : undefined,
    },
  };
  if (tablesBefore) {
    // Table statistics reach the shared counters within a second of each transaction's end.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    out.tables = tableWritesPer(tablesBefore, await tableWrites(), r.requests);
    if (lsnBefore) out.walKinds = await walKinds(lsnBefore, await flushedLsn(), r.requests);
  }
  if (process.env.BENCH_STATEMENTS && before.pg && pgAfter)
    out.pgCpu = await pgCpuByBackend(before.pg, pgAfter, observers, r.requests);
  if (stats) {
    const { rows } = await admin.query(
      `SELECT d.datname, sum(s.calls)::int AS calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE s.query NOT LIKE '%pg_stat_%' GROUP BY d.datname`,
    );
    const calls = (name: string) => Number(rows.find((x) => x.datname === name)?.calls ?? 0) / r.requests;
    out.statements = { app: calls("checkout"), provider: calls("provider") };
    if (process.env.BENCH_STATEMENTS) out.top = await topStatements(r.requests);
  }
  return out;
}

const withWebhook = webhookDeliveryRow({
  admin,
  accountId,
  orders,
  pay: (k, id) => pay(k, payBody(id)),
  measure: measured,
});
// Warm-up: Next compiles routes lazily and pools fill on first use.
for (let i = 0; i < 50; i++) await client.request("GET", "/api/trpc/catalog.list", {});
for (const id of await orders(20)) await pay(randomUUID(), payBody(id));

// Passes up to 0 warm up and are not reported: a first pass ran cold (catalog.list ×16 at 60 %
// of the second pass's rate, fresh ×16 at 85 %), which moved every first-pass ratio.
// The same API on the API tier (node dist/api.mjs, no Next) in the same passes, its loads before
// or after the Next route's by turns: what Next's own per-request work adds, with neither side
// always meeting the larger database. Its outbox is relayed by the Next server's jobs.
const apiTier = await startApiTierBench({
  root: ROOT,
  port: PORT + 2,
  env: {
    DATABASE_URL: dbUrl("checkout"),
    PAYMENT_PROVIDER_URL: provider.url,
    APP_ENV: "development",
    LOG_FORMAT: process.env.LOG_FORMAT ?? "json",
  },
  clients: CLIENTS,
  sizes: SIZES,
  orders,
  paymentsOf,
  payBody: (id) => payBody(id),
  customer: alice,
  operator,
  measure: measured,
  workersCpu: serverCpu,
});
for (let pass = 1 - WARMUP_PASSES; pass <= PASSES; pass++) {
  const record = pass < 1 ? () => {} : recordResult;
  if (pass % 2 === 0) await apiTier.pass(record);
  await nextPass(record);
  if (pass % 2 !== 0) await apiTier.pass(record);
}
await apiTier.stop();

/** One pass of the Next route's loads, each handed to `record`. */
async function nextPass(record: (name: string, m: Measured) => void) {
  for (const [i, clients] of CLIENTS.entries()) {
    const n = (s: number[]) => s[i] as number;
    // The parts of a payment's path that are not ours: Next answering a route that does nothing
    // (liveness, no database), and the provider's charge asked directly.
    record(
      `Next, no database (/api/health/live) ×${clients}`,
      await measured(() =>
        closedLoop(
          clients,
          n(SIZES.health),
          async () => (await client.request("GET", "/api/health/live", {})).status === 200,
        ),
      ),
    );
    // The same charge through Stripe's SDK (the app's binding) and as one plain HTTP request:
    // this process's CPU per charge, side by side, is the SDK's cost per payment (issue 39).
    record(
      `provider charge alone ×${clients}`,
      await measured(
        () =>
          closedLoop(clients, n(SIZES.charge), async () => {
            const charge = await charges.createCharge(
              { amount: 2500, currency: "EUR", paymentMethod: "pm_card_visa" },
              `bench_${randomUUID()}`,
            );
            return charge.status === "succeeded";
          }),
        benchCpu,
      ),
    );
    record(
      `provider charge, plain HTTP ×${clients}`,
      await measured(
        () => closedLoop(clients, n(SIZES.charge), async () => (await plainCharge()) === "succeeded"),
        benchCpu,
      ),
    );
    record(
      `catalog.list ×${clients}`,
      await measured(() =>
        closedLoop(
          clients,
          n(SIZES.catalog),
          async () => (await client.request("GET", "/api/trpc/catalog.list", {})).status === 200,
        ),
      ),
    );
    const ids = await orders(n(SIZES.fresh));
    const keys = ids.map(() => randomUUID());
    record(
      `fresh ×${clients}`,
      await measured(() =>
        closedLoop(
          clients,
          ids.length,
          async (k) => (await pay(keys[k] as string, payBody(ids[k] as string))).status === 200,
        ),
      ),
    );
    record(deliveredRow(clients), await withWebhook(clients, n(SIZES.fresh)));
    record(
      `replay ×${clients}`,
      await measured(() =>
        closedLoop(clients, n(SIZES.replay), async (k) => {
          const j = k % ids.length;
          return (await pay(keys[j] as string, payBody(ids[j] as string))).status === 200;
        }),
      ),
    );
    record(`409 ×${clients}`, await conflicts(clients, n(SIZES.conflict)));
    // A refund beside a payment: the same layer mounted again, one whole refund per payment paid
    // above (its own key, its provider refund, its reversal booked), and the provider's refund alone.
    const paid = await paymentsOf(ids.slice(0, n(SIZES.refund)));
    record(
      `refund ×${clients}`,
      await measured(() =>
        closedLoop(
          clients,
          paid.length,
          async (k) => (await refund(randomUUID(), paid[k] as string)).status === 200,
        ),
      ),
    );
    const providerCharges: string[] = [];
    await closedLoop(16, n(SIZES.refund), async () => {
      const c = await charges.createCharge(
        { amount: 2500, currency: "EUR", paymentMethod: "pm_card_visa" },
        `bench_${randomUUID()}`,
      );
      providerCharges.push(c.id);
      return true;
    });
    // A capture beside a payment: an operator's capture of an authorization made just before
    // (its own key, its action row, the provider's capture, the hold released and the capture
    // posted in one statement), and the provider's capture alone.
    const held = await authorizations(n(SIZES.capture));
    record(
      `capture ×${clients}`,
      await measured(() =>
        closedLoop(
          clients,
          held.length,
          async (k) => (await capture(randomUUID(), held[k] as string)).status === 200,
        ),
      ),
    );
    const providerHolds: string[] = [];
    await closedLoop(16, n(SIZES.capture), async () => {
      const c = await charges.createCharge(
        { amount: 2500, currency: "EUR", paymentMethod: "pm_card_visa", captureMethod: "manual" },
        `bench_${randomUUID()}`,
      );
      providerHolds.push(c.id);
      return true;
    });
    record(
      `provider capture alone ×${clients}`,
      await measured(() =>
        closedLoop(clients, providerHolds.length, async (k) => {
          const c = await charges.captureCharge(providerHolds[k] as string, {}, `bench_${randomUUID()}`);
          return c.status === "succeeded";
        }),
      ),
    );
    record(
      `provider refund alone ×${clients}`,
      await measured(() =>
        closedLoop(clients, providerCharges.length, async (k) => {
          const r = await charges.createRefund(
            { charge: providerCharges[k] as string, amount: 2500 },
            `bench_${randomUUID()}`,
          );
          return r.status === "succeeded";
        }),
      ),
    );
  }
}

for (const [name, rs] of Object.entries(
  await extraComparisons({
    url: dbUrl("checkout"),
    providerUrl: provider.url,
    accountId,
    orders,
    clients: CLIENTS,
    measure: (run) => measured(run, thisProcessCpu),
  }),
))
  for (const r of rs) recordResult(name, r);

const floor = CLIENTS.map((c) => runFloor(dbUrl("floor"), c, FLOOR_SECONDS));
report();
printApiTier(results, apiTier.workers, floor);

client.close();
await stopServer();
await admin.end();
await provider.stop();
await providerDatabase.stop();
await database.stop();

/** 409s: payments held at the provider (a fault header delays its answer) keep their keys in flight. */
async function conflicts(clients: number, total: number): Promise<Measured> {
  const ids = await orders(clients);
  const keys = ids.map(() => randomUUID());
  const hold = (k: number) =>
    client.request(
      "POST",
      "/api/trpc/payments.create",
      { authorization: alice, "idempotency-key": keys[k] as string, "x-provider-fault": "latency=9000" },
      payBody(ids[k] as string),
    );
  const held = ids.map((_, k) => hold(k));
  await new Promise((r) => setTimeout(r, 500));
  const m = await measured(() =>
    closedLoop(clients, total, async (i) => {
      const k = i % clients;
      return (await pay(keys[k] as string, payBody(ids[k] as string))).status === 409;
    }),
  );
  await Promise.all(held);
  return m;
}

/**
 * Waits (up to 20 s) until every outbox message is relayed and every queued delivery handled: the
 * background work a load leaves behind. The relay and the consumer poll every 500 ms when idle.
 */
async function messagingDrained(): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const { rows } = await admin.query(
      `SELECT (SELECT count(*) FROM outbox_messages WHERE sent_at IS NULL)
            + (SELECT count(*) FROM pgboss.job WHERE state < 'completed') AS n`,
    );
    if (Number(rows[0].n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The backends of the bench's own connections, alive now (the sampler's until it stops). */
async function observerPids(): Promise<Set<number>> {
  const { rows } = await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [
    OBSERVER,
  ]);
  return new Set(rows.map((x) => x.pid as number));
}

/** Groups PostgreSQL's CPU by backend: the app's pools, pg-boss, the provider, WAL writer, checkpointer… */
async function pgCpuByBackend(
  before: Map<number, number>,
  after: Map<number, number>,
  observers: Set<number>,
  requests: number,
) {
  const { rows } = await admin.query(
    `SELECT pid, coalesce(datname || '/' || nullif(application_name, ''), datname, backend_type) AS label
       FROM pg_stat_activity`,
  );
  const label = new Map(rows.map((x) => [x.pid as number, x.label as string]));
  const out: Record<string, number> = {};
  for (const [pid, ms] of after) {
    const name =
      pid === postmasterPid
        ? "postmaster"
        : observers.has(pid)
          ? "the bench's own (not counted)"
          : (label.get(pid) ?? "exited during the load");
    out[name] = (out[name] ?? 0) + (ms - (before.get(pid) ?? 0)) / requests;
  }
  return out;
}

type TableWrites = Map<string, { ins: number; upd: number; hot: number; del: number }>;
/** Rows written so far in the app's database, by table (pg-boss's included). */
async function tableWrites(): Promise<TableWrites> {
  const { rows } = await admin.query(
    `SELECT schemaname || '.' || relname AS t, n_tup_ins::float8 AS ins, n_tup_upd::float8 AS upd,
            n_tup_hot_upd::float8 AS hot, n_tup_del::float8 AS del
       FROM pg_stat_user_tables`,
  );
  return new Map(rows.map((x) => [x.t as string, { ins: x.ins, upd: x.upd, hot: x.hot, del: x.del }]));
}
function tableWritesPer(before: TableWrites, after: TableWrites, requests: number): string[] {
  const out: string[] = [];
  for (const [t, a] of after) {
    const b = before.get(t) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, hot: a.hot - b.hot, del: a.del - b.del };
    if (d.ins + d.upd + d.del === 0) continue;
    const f = (x: number) => (x / requests).toFixed(2);
    out.push(`${t}: ins ${f(d.ins)} upd ${f(d.upd)} (HOT ${f(d.hot)}) del ${f(d.del)} per req`);
  }
  return out;
}

async function flushedLsn(): Promise<string> {
  return (await admin.query("SELECT pg_current_wal_flush_lsn()::text AS l")).rows[0].l as string;
}

/**
 * BENCH_STATEMENTS=1: the WAL between two positions by resource manager (pg_walinspect), each
 * record's own bytes apart from its full-page images: images follow checkpoints, not the work.
 */
async function walKinds(from: string, to: string, requests: number): Promise<string[]> {
  if (from === to) return [];
  const { rows } = await admin.query(
    `SELECT "resource_manager/record_type" AS rm, count::float8 AS n, record_size::float8 AS rec, fpi_size::float8 AS fpi
       FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY combined_size DESC`,
    [from, to],
  );
  const kb = (b: number) => (b / 1024 / requests).toFixed(2);
  const total = rows.reduce((t, x) => ({ rec: t.rec + x.rec, fpi: t.fpi + x.fpi }), { rec: 0, fpi: 0 });
  return [
    `WAL kB/req: records ${kb(total.rec)}, full-page images ${kb(total.fpi)}`,
    ...rows.map(
      (x) => `  ${x.rm}: ${(x.n / requests).toFixed(2)} records ${kb(x.rec)} kB + images ${kb(x.fpi)} kB`,
    ),
  ];
}

/** BENCH_STATEMENTS=1: where PostgreSQL's time went, per request, statement by statement. */
async function topStatements(requests: number): Promise<string[]> {
  const { rows } = await admin.query(
    `SELECT d.datname, s.calls, s.total_plan_time, s.total_exec_time, s.wal_bytes::float8 AS wal,
            left(regexp_replace(s.query, '\\s+', ' ', 'g'), 110) AS q
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE s.query NOT LIKE '%pg_stat_%' ORDER BY s.total_plan_time + s.total_exec_time DESC LIMIT 20`,
  );
  return rows.map(
    (x) =>
      `${x.datname} calls/req ${(x.calls / requests).toFixed(2)} plan ${(x.total_plan_time / requests).toFixed(3)} exec ${(x.total_exec_time / requests).toFixed(3)} ms/req WAL ${(x.wal / 1024 / requests).toFixed(2)} kB/req  ${x.q}`,
  );
}

function report() {
  const fmt = (x: number | undefined, d = 1) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(d));
  console.log(
    `\nbench:http  ${new Date().toISOString()}  passes: ${PASSES}  prepared statements: ${process.env.DATABASE_PREPARED_STATEMENTS}  load: ${readFileSync("/proc/loadavg", "utf8").trim()}`,
  );
  console.log(
    "| what | pass | p50 ms | p99 ms | per s | unexpected | server CPU ms/req | postgres CPU ms/req | provider CPU ms/req (process + its PostgreSQL) | statements/req (app db, provider db) | lock-waiting share | WAL-flush-waiting share | WAL kB/req | new db sessions |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [name, runs] of Object.entries(results)) {
    runs.forEach((r, p) => {
      console.log(
        `| ${name} | ${p + 1} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.perSecond, 0)} | ${r.unexpected} | ${fmt(r.cpu?.server, 2)} | ${fmt(r.cpu?.postgres, 2)} | ${fmt(r.cpu?.provider, 2)} | ${r.statements ? `${fmt(r.statements.app)}, ${providerSeparate ? "own server" : fmt(r.statements.provider)}` : "n/a"} | ${fmt(r.waits && r.waits.lock * 100, 0)}% | ${fmt(r.waits && r.waits.walFlush * 100, 0)}% | ${fmt(r.walKb)} | ${fmt(r.newSessions, 0)} |`,
      );
    });
  }
  for (const f of floor) {
    if (f)
      console.log(
        `| pgbench floor ×${f.clients} | - | ${fmt(f.latencyMs, 2)} (avg) | - | ${fmt(f.tps, 0)} | - | - | - | - | - | - | - |`,
      );
    else console.log("| pgbench floor | pgbench not installed |");
  }
  for (const [name, runs] of Object.entries(results))
    for (const r of runs) {
      if (!r.top) continue;
      const waits = Object.entries(r.waits?.events ?? {})
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([event, share]) => `${event} ${fmt(share * 100, 0)}%`);
      const cpu = Object.entries(r.pgCpu ?? {})
        .filter(([, ms]) => ms >= 0.01)
        .sort((a, b) => b[1] - a[1])
        .map(([who, ms]) => `${who} ${fmt(ms, 2)}`);
      console.log(
        `\n${name}\nactive sessions sampled: ${waits.join(", ")}\npostgres CPU ms/req: ${cpu.join(", ")}\n${r.top.join("\n")}\n${(r.tables ?? []).join("\n")}\n${(r.walKinds ?? []).join("\n")}`,
      );
    }
  const best = (name: string, key: "perSecond" | "p50") => {
    const xs = (results[name] ?? []).map((r) => r[key]);
    return key === "perSecond" ? Math.max(...xs) : Math.min(...xs);
  };
  const byPass = (a: string, b: string, key: "perSecond" | "p50") =>
    (results[a] ?? [])
      .map((r, p) => fmt(r[key] / ((results[b] ?? [])[p]?.[key] ?? Number.NaN), 3))
      .join(" / ");
  const perPassOf = (name: string, read: (r: Measured) => number) =>
    (results[name] ?? []).map((r) => fmt(read(r), 2)).join(" / ");
  for (const line of deliveryCostLines(results, CLIENTS)) console.log(line);
  console.log("\nratios (per pass)");
  console.log(
    `fresh ×16 throughput / catalog.list ×16 throughput: ${byPass("fresh ×16", "catalog.list ×16", "perSecond")}`,
  );
  console.log(`replay ×1 p50 / fresh ×1 p50: ${byPass("replay ×1", "fresh ×1", "p50")}`);
  console.log(`409 ×1 p50 / fresh ×1 p50: ${byPass("409 ×1", "fresh ×1", "p50")}`);
  console.log(`refund ×1 p50 / fresh ×1 p50: ${byPass("refund ×1", "fresh ×1", "p50")}`);
  console.log(
    `refund ×16 throughput / fresh ×16 throughput: ${byPass("refund ×16", "fresh ×16", "perSecond")}`,
  );
  console.log(
    `provider refund alone ×1 p50 / provider charge alone ×1 p50: ${byPass("provider refund alone ×1", "provider charge alone ×1", "p50")}`,
  );
  console.log(`capture ×1 p50 / fresh ×1 p50: ${byPass("capture ×1", "fresh ×1", "p50")}`);
  console.log(
    `capture ×16 throughput / fresh ×16 throughput: ${byPass("capture ×16", "fresh ×16", "perSecond")}`,
  );
  console.log(
    `provider capture alone ×1 p50 / provider charge alone ×1 p50: ${byPass("provider capture alone ×1", "provider charge alone ×1", "p50")}`,
  );
  for (const c of CLIENTS) {
    const sdk = `provider charge alone ×${c}`;
    const plain = `provider charge, plain HTTP ×${c}`;
    console.log(
      `SDK / plain HTTP ×${c}: p50 ${byPass(sdk, plain, "p50")}; this process's CPU per charge ${perPassOf(sdk, (r) => r.cpu?.server ?? Number.NaN)} vs ${perPassOf(plain, (r) => r.cpu?.server ?? Number.NaN)} ms (the SDK's cost per payment: ${(results[sdk] ?? []).map((r, p) => fmt((r.cpu?.server ?? Number.NaN) - ((results[plain] ?? [])[p]?.cpu?.server ?? Number.NaN), 2)).join(" / ")} ms)`,
    );
  }
  console.log(
    `Next, no database ×16 / catalog.list ×16 throughput: ${byPass("Next, no database (/api/health/live) ×16", "catalog.list ×16", "perSecond")}`,
  );
  const cpuRatio = (a: string, b: string) => {
    const [x, y] = [results[a]?.[0]?.cpu, results[b]?.[0]?.cpu];
    return x && y
      ? `this process ${fmt(x.server / y.server, 2)}, PostgreSQL ${fmt((x.postgres ?? Number.NaN) / (y.postgres ?? Number.NaN), 2)}`
      : "n/a";
  };
  for (const c of CLIENTS)
    console.log(
      `in process ×${c}, idempotency off / payments.create: throughput ${byPass(`in process: idempotency off ×${c}`, `in process: payments.create ×${c}`, "perSecond")}; CPU per payment ${cpuRatio(`in process: idempotency off ×${c}`, `in process: payments.create ×${c}`)}`,
    );
  // A variant's throughput over all its rounds: every request over every second.
  const overall = (name: string) => {
    const rs = results[name] ?? [];
    return rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((t, r) => t + r.seconds, 0);
  };
  const on16 = overall("in process: payments.create ×16");
  const off16 = overall("in process: idempotency off ×16");
  const perPass = (name: string, read: (r: Measured) => number | undefined, digits = 2) =>
    (results[name] ?? []).map((r) => fmt(read(r), digits)).join(" / ");
  console.log("\nissue 27's targets (per pass, or per round in process)");
  console.log(
    `in process ×16, layer on / off throughput (≥ 0.87): all rounds ${fmt(on16 / off16, 3)} (${fmt(on16, 0)} vs ${fmt(off16, 0)} per s); per round ${byPass("in process: payments.create ×16", "in process: idempotency off ×16", "perSecond")}`,
  );
  console.log(
    `PostgreSQL CPU ms per fresh payment ×16, background jobs included (≤ 2.5): ${perPass("fresh ×16", (r) => r.cpu?.postgres)}`,
  );
  console.log(`WAL kB per fresh payment ×16 (≤ 6): ${perPass("fresh ×16", (r) => r.walKb)}`);
  console.log(
    `replay ×1 p50 / catalog.list ×1 p50 (≤ 1.25): ${byPass("replay ×1", "catalog.list ×1", "p50")}`,
  );
  console.log(
    `API tier: fresh ×16 / catalog.list ×16 throughput: ${byPass("API tier: fresh ×16", "API tier: catalog.list ×16", "perSecond")}`,
  );
  // The ceiling of the 0.4 target: payments with no HTTP and no Next at all (in process), and
  // the app's SQL alone (no provider either), against the server's trivial query over HTTP.
  const overCatalog = (name: string) =>
    fmt(best(name, "perSecond") / best("catalog.list ×16", "perSecond"), 3);
  console.log(
    `without HTTP or Next, over catalog.list ×16 (best passes): in process payments.create ×16 ${overCatalog("in process: payments.create ×16")}, node-postgres app's SQL ×16 ${overCatalog("node-postgres, the app's SQL ×16")}`,
  );
  const [f1, f16] = floor;
  if (f1 && f16) {
    console.log(
      `API tier: fresh ×16 / pgbench ×16 tps: ${fmt(best("API tier: fresh ×16", "perSecond") / f16.tps, 3)}; fresh ×1 p50 / pgbench ×1: ${fmt(best("API tier: fresh ×1", "p50") / f1.latencyMs, 2)}`,
    );
    console.log(
      `fresh ×16 throughput / pgbench ×16 tps: ${fmt(best("fresh ×16", "perSecond") / f16.tps, 3)}`,
    );
    console.log(`fresh ×1 p50 / pgbench ×1 latency: ${fmt(best("fresh ×1", "p50") / f1.latencyMs, 2)}`);
    // What is left of fresh ×1 once the parts that are not ours are taken out, per pass.
    const ours = (results["fresh ×1"] ?? []).map(
      (r, p) =>
        r.p50 -
        ((results["Next, no database (/api/health/live) ×1"] ?? [])[p]?.p50 ?? Number.NaN) -
        ((results["provider charge alone ×1"] ?? [])[p]?.p50 ?? Number.NaN),
    );
    const overFloor = (name: string) =>
      (results[name] ?? []).map((r) => fmt(r.p50 / f1.latencyMs, 2)).join(" / ");
    console.log(
      `Next alone ×1 p50 / pgbench ×1: ${overFloor("Next, no database (/api/health/live) ×1")}; provider charge alone ×1 p50 / pgbench ×1: ${overFloor("provider charge alone ×1")}`,
    );
    console.log(
      `(fresh ×1 p50 − Next alone ×1 p50 − provider charge alone ×1 p50) / pgbench ×1: ${ours.map((x) => fmt(x / f1.latencyMs, 2)).join(" / ")}`,
    );
    // Replay ≤ 0.3 × fresh and fresh ≤ 5 × pgbench hold together only if a replay takes at most
    // 1.5 × pgbench ×1: set beside the server's cheapest requests (docs/decisions/0049).
    console.log(
      `both ×1 targets need replay ×1 p50 / pgbench ×1 ≤ 1.5: replay ${overFloor("replay ×1")}; catalog.list ${overFloor("catalog.list ×1")}`,
    );
  }
}

async function startServer(): Promise<ChildProcess> {
  const profile = process.env.BENCH_CPU_PROF;
  const args = [
    ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
    "node_modules/next/dist/bin/next",
    "start",
    "--port",
    String(PORT),
    "--hostname",
    "127.0.0.1",
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: dbUrl("checkout"),
      PAYMENT_PROVIDER_URL: provider.url,
      PORT: String(PORT),
      // The demo customers' keys: `next start` alone is production (decision 0145).
      APP_ENV: "development",
      // As a deployment logs (`APP_ENV=production` means JSON); the development default pretty-prints
      // every request synchronously.
      LOG_FORMAT: process.env.LOG_FORMAT ?? "json",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  // A crash of the bench must not leave the server holding its port for the next run.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${PORT}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`next start did not answer on port ${PORT}`);
}

async function stopServer() {
  const exited = new Promise((r) => server.once("exit", r));
  server.kill("SIGTERM");
  await exited;
}

/** pg_stat_statements needs a preload: set it and restart the embedded server once. */
async function recreateDatabases(serverUrl: string, names: string[]): Promise<void> {
  const u = new URL(serverUrl);
  u.pathname = "/postgres";
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  try {
    for (const name of names) {
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.query(`CREATE DATABASE "${name}"`);
    }
  } finally {
    await c.end();
  }
}

async function enableStatementStats(): Promise<number> {
  const c = new pg.Client({ connectionString: dbUrl("checkout") });
  await c.connect();
  const loaded = (await c.query("SHOW shared_preload_libraries")).rows[0].shared_preload_libraries as string;
  if (!loaded.includes("pg_stat_statements")) {
    await c.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    await c.end();
    await database.stop();
    Object.assign(
      database,
      await startDatabase({
        instance: "test",
        root: join(ROOT, ".data", "bench"),
        databases: BENCH_DATABASES,
      }),
    );
  } else await c.end();
  const c2 = new pg.Client({ connectionString: dbUrl("checkout") });
  await c2.connect();
  await c2.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  // BENCH_STATEMENTS=1 reads each load's WAL by record type with it.
  await c2.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
  // Planning time counts too: a large statement planned on every call costs as much as running it.
  await c2.query("ALTER SYSTEM SET pg_stat_statements.track_planning = on");
  await c2.query("SELECT pg_reload_conf()");
  await c2.end();
  return (await postmasterOf(dbUrl("checkout"))) ?? 0;
}
