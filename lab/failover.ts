import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { requireBinaries } from "../scripts/lib/debian-package";
import { startDatabase } from "../scripts/lib/embedded-pg";
import {
  defaultHaDir,
  type HaCluster,
  type HaNode,
  requirePgServer,
  startHaPostgres,
} from "../scripts/lib/ha-postgres";

import { startStack } from "../scripts/lib/stack";

/**
 * `npm run test:failover`: impatient clients pay (each retrying its own Idempotency-Key, honouring
 * Retry-After) while the primary's PostgreSQL is SIGKILLed; Patroni promotes the synchronous
 * standby and rejoins the old primary. Then every 200 a client saw must be booked, no order
 * charged twice, the books balanced, the reconciler clean and every key finished or visible.
 * Prints the time from the kill to the first successful payment and `lost acknowledged payments:
 * N`; exits 1 when an invariant fails. FAILOVER_REPLICATION=asynchronous measures the same with
 * synchronous replication off (decision 0081); the provider keeps its store in a database of its
 * own, so its charges survive whatever the cluster loses.
 */
const ZOptions = z.object({
  FAILOVER_REPLICATION: z.enum(["synchronous", "strict", "asynchronous"]).default("synchronous"),
  /** `primary-killed`: the test; `standby-lost`: the edge of decision 0081, measured. */
  FAILOVER_SCENARIO: z.enum(["primary-killed", "standby-lost"]).default("primary-killed"),
  /** How far behind the standby is when the primary dies: see the kill below. */
  FAILOVER_STANDBY_LAG_MS: z.coerce.number().int().min(0).max(10_000).default(1000),
  FAILOVER_STANDBY_GONE_SECONDS: z.coerce.number().min(1).max(120).default(10),
  FAILOVER_CLIENTS: z.coerce.number().int().min(1).max(64).default(8),
  /** Seconds of paying before the kill. */
  FAILOVER_WARMUP_SECONDS: z.coerce.number().min(1).max(60).default(4),
  /** Seconds of paying after the old primary is back as a standby. */
  FAILOVER_COOLDOWN_SECONDS: z.coerce.number().min(0).max(60).default(3),
  FAILOVER_ORDERS: z.coerce.number().int().min(10).max(100_000).default(900),
  FAILOVER_PROVIDER_PG_PORT: z.coerce.number().int().min(1).max(65535).default(25318),
});
const options = ZOptions.parse(
  Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== "")),
);
const synchronous = options.FAILOVER_REPLICATION !== "asynchronous";
const TOKEN = "sk_test_alice";
const REQUEST_TIMEOUT_MS = 3000;
const KEY_DEADLINE_MS = 120_000;
/** Answers that were not final, by status (or `timeout`/`cut` when none came): what clients went through. */
const interim: Record<string, number> = {};

// The cluster is this script's own: no DATABASE_URL or provider from the environment.
delete process.env.DATABASE_URL;
delete process.env.DIRECT_DATABASE_URL;
delete process.env.PAYMENT_PROVIDER_URL;
process.env.APP_ENV ??= "development";

const binaries = requireBinaries(["pgbouncer", "haproxy", "patroni", "etcd"]);
const pgBinDir = requirePgServer();
const started = Date.now();
const t = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
const log = (line: string) => console.log(`[${t()}] ${line}`);

const stops: (() => Promise<void>)[] = [];
const stopAll = async () => {
  for (const s of stops.reverse()) await s().catch((e: unknown) => console.error(e));
};

interface Outcome {
  orderId: string;
  key: string;
  status: number | "unfinished";
  paymentId?: string;
  attempts: number;
  sentAt: number;
  answeredAt: number;
}

let exitCode = 1;
try {
  const haDir = `${defaultHaDir()}-failover`;
  log(`starting 2-node Patroni cluster (${options.FAILOVER_REPLICATION} replication)`);
  const ha = await startHaPostgres({
    binaries: { patroni: binaries.patroni, etcd: binaries.etcd, haproxy: binaries.haproxy },
    pgBinDir,
    dir: haDir,
    fresh: true,
    synchronous,
    strict: options.FAILOVER_REPLICATION === "strict",
  });
  stops.push(() => ha.stop());
  await ha.waitForStandby();
  log(`cluster up: ${JSON.stringify(await ha.states())}`);

  // The provider is another company's service: its store is not in our cluster (decision 0081).
  // Fresh with the cluster, so that the reconciler compares this run's charges with this run's books.
  const providerDb = await startDatabase({
    instance: "provider",
    port: options.FAILOVER_PROVIDER_PG_PORT,
    root: join(haDir, "provider"),
  });
  stops.push(() => providerDb.stop());

  const stack = await startStack("test", {
    database: { url: ha.url, embedded: false, stop: async () => {} },
    pgbouncer: binaries.pgbouncer,
    // PgBouncer waits server_login_retry (15 s) after a failed login before it tries the server
    // again: during a failover that would be most of the outage.
    pgbouncerSettings: { server_login_retry: 1, server_connect_timeout: 3 },
    providerDatabaseUrl: providerDb.url,
  });
  stops.push(() => stack.stop());
  const { startApiProcess, startWorkerProcess } = await import("../server/test/processes");
  const appEnv = {
    ...stack.env,
    APP_ENV: "development",
    LOG_LEVEL: "error",
    RATE_LIMIT_PAYMENTS_PER_MINUTE: "1000000",
    RATE_LIMIT_ORDERS_PER_MINUTE: "1000000",
    // An attempt cut by the failover holds its key this long before a retry may take it over.
    PAYMENT_LEASE_SECONDS: "5",
  };
  const api = await startApiProcess(appEnv);
  stops.push(() => api.stop());
  const worker = await startWorkerProcess(appEnv);
  stops.push(() => worker.stop());
  log(`api ${api.url}, worker running, provider store on its own PostgreSQL`);

  const base = api.url;
  // Enough orders for the whole run, so that during the outage the clients are paying.
  const orders: string[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (orders.length < options.FAILOVER_ORDERS) orders.push(await createOrder(base, 30_000));
    }),
  );
  log(`${orders.length} orders created`);

  const outcomes: Outcome[] = [];
  let killedAt = 0;
  let stopPaying = false;
  const firstSuccessAfterKill = { at: 0 };
  const client = async () => {
    while (!stopPaying) {
      const orderId = orders.pop() ?? (await createOrderRetrying(base));
      const outcome = await payUntilFinal(base, orderId, killedAt, firstSuccessAfterKill);
      outcomes.push(outcome);
    }
  };
  const clients = Array.from({ length: options.FAILOVER_CLIENTS }, () => client());

  await sleep(options.FAILOVER_WARMUP_SECONDS * 1000);
  const timings: string[] = [];
  if (options.FAILOVER_SCENARIO === "standby-lost") {
    // The edge: the standby's node is gone (Patroni and its PostgreSQL stopped) for a while.
    const standby = await ha.waitForStandby();
    await ha.stopNode(standby);
    killedAt = Date.now();
    const before = outcomes.filter((o) => o.status === 200).length;
    log(`${standby.name} (the standby) stopped`);
    await sleep(options.FAILOVER_STANDBY_GONE_SECONDS * 1000);
    const during = outcomes.filter((o) => o.status === 200 && o.answeredAt >= killedAt).length;
    timings.push(
      `payments acknowledged in the ${options.FAILOVER_STANDBY_GONE_SECONDS} s without a standby: ${during} (${before} before)`,
    );
    ha.startNode(standby);
    await ha.waitForStandby(120_000);
    timings.push(`standby back ${Date.now() - killedAt} ms after it was stopped`);
  } else {
    const primary = await ha.waitForPrimary();
    const pid = ha.postmasterPid(primary);
    if (!pid) throw new Error(`no postmaster on ${primary.name}`);
    const paidBeforeKill = outcomes.filter((o) => o.status === 200).length;
    // A lagging standby, as a slow link makes one: the primary's WAL senders are stopped
    // (SIGSTOP) for FAILOVER_STANDBY_LAG_MS and die with it, so the WAL written meanwhile reaches
    // no standby. Synchronous commits wait for it; asynchronous ones are acknowledged regardless.
    const senders = options.FAILOVER_STANDBY_LAG_MS > 0 ? ha.processPids(primary, "walsender") : [];
    if (options.FAILOVER_STANDBY_LAG_MS > 0 && senders.length === 0)
      throw new Error("no WAL sender on the primary");
    for (const sender of senders) process.kill(sender, "SIGSTOP");
    if (senders.length > 0) {
      log(
        `${primary.name}'s WAL senders (${senders.join(", ")}) stopped for ${options.FAILOVER_STANDBY_LAG_MS} ms`,
      );
      await sleep(options.FAILOVER_STANDBY_LAG_MS);
    }
    killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    for (const sender of senders) process.kill(sender, "SIGKILL");
    log(
      `SIGKILL to ${primary.name}'s postmaster (pid ${pid}); ${paidBeforeKill} payments acknowledged so far`,
    );
    const promoted = await waitForNewPrimary(ha, primary);
    timings.push(`new primary ${promoted.name} promoted ${Date.now() - killedAt} ms after the kill`);
    await ha.waitForStandby(120_000);
    timings.push(
      `old primary ${primary.name} rejoined as a standby ${Date.now() - killedAt} ms after the kill`,
    );
  }
  for (const line of timings) log(line);
  log(JSON.stringify(await ha.states()));
  await sleep(options.FAILOVER_COOLDOWN_SECONDS * 1000);
  stopPaying = true;
  await Promise.all(clients);
  log(`clients done: ${outcomes.length} payments`);

  const verdict = await checkInvariants(ha, stack.env.PAYMENT_PROVIDER_URL ?? "", outcomes);
  // A 500 is an outage the app did not recognise as one: clients are not told to retry.
  if (interim["500"]) verdict.failures.push(`${interim["500"]} answers were 500, not a retryable 503`);
  if (interim["503 without Retry-After"]) verdict.failures.push("a 503 came without Retry-After");
  const firstMs = firstSuccessAfterKill.at ? firstSuccessAfterKill.at - killedAt : null;
  const statusCounts = countBy(outcomes.map((o) => String(o.status)));
  const retried = outcomes.filter((o) => o.attempts > 1).length;
  console.log("");
  console.log(`replication: ${options.FAILOVER_REPLICATION}`);
  console.log(`payments: ${outcomes.length} (${JSON.stringify(statusCounts)}), ${retried} needed retries`);
  console.log(`answers before the final one: ${JSON.stringify(interim)}`);
  console.log(`scenario: ${options.FAILOVER_SCENARIO}`);
  for (const line of timings) console.log(line);
  if (options.FAILOVER_SCENARIO === "primary-killed")
    console.log(`time from kill to first successful payment: ${firstMs === null ? "none" : `${firstMs} ms`}`);
  console.log(`lost acknowledged payments: ${verdict.lost.length}`);
  for (const line of verdict.report) console.log(line);
  console.log(verdict.failures.length === 0 ? "✔ all invariants hold" : "✖ invariants failed:");
  for (const f of verdict.failures) console.log(`  - ${f}`);
  exitCode = verdict.failures.length === 0 ? 0 : 1;
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await stopAll();
}
process.exit(exitCode);

async function createOrder(base: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<string> {
  const res = await fetch(`${base}/api/v1/orders`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /api/v1/orders answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Orders are created during the failover too: retried until the database answers. */
async function createOrderRetrying(base: string): Promise<string> {
  for (;;) {
    try {
      return await createOrder(base);
    } catch {
      interim["order not created"] = (interim["order not created"] ?? 0) + 1;
      await sleep(500);
    }
  }
}

/**
 * One shopper's payment: the same key until a final answer (2xx or 4xx other than 409/429), each
 * attempt given up after REQUEST_TIMEOUT_MS, waiting Retry-After (else 0.5 s) between attempts.
 */
async function payUntilFinal(
  base: string,
  orderId: string,
  killedAt: number,
  first: { at: number },
): Promise<Outcome> {
  const key = randomUUID();
  const sentAt = Date.now();
  let attempts = 0;
  while (Date.now() - sentAt < KEY_DEADLINE_MS) {
    attempts++;
    const attemptAt = Date.now();
    let wait = 500;
    try {
      const res = await fetch(`${base}/api/v1/payments`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKEN}`,
          "content-type": "application/json",
          "idempotency-key": key,
        },
        body: JSON.stringify({ orderId, paymentMethod: "pm_card_visa" }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      const final = res.status < 500 && res.status !== 409 && res.status !== 429;
      if (final) {
        const body = JSON.parse(text) as { id?: string; paymentId?: string };
        const answeredAt = Date.now();
        if (res.status === 200 && killedAt && attemptAt >= killedAt && !first.at) first.at = answeredAt;
        return {
          orderId,
          key,
          status: res.status,
          paymentId: body.id ?? body.paymentId,
          attempts,
          sentAt,
          answeredAt,
        };
      }
      const noted =
        res.status === 503 && !res.headers.has("retry-after")
          ? "503 without Retry-After"
          : String(res.status);
      interim[noted] = (interim[noted] ?? 0) + 1;
      const retryAfter = Number(res.headers.get("retry-after"));
      if (Number.isFinite(retryAfter) && retryAfter > 0) wait = retryAfter * 1000;
    } catch (error) {
      // Timed out or cut: the same key again.
      const kind = (error as { name?: string }).name === "TimeoutError" ? "timeout" : "cut";
      interim[kind] = (interim[kind] ?? 0) + 1;
    }
    await sleep(wait);
  }
  return { orderId, key, status: "unfinished", attempts, sentAt, answeredAt: Date.now() };
}

async function waitForNewPrimary(ha: HaCluster, old: HaNode): Promise<HaNode> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    const states = await ha.states();
    const next = states.find(
      (s) => s.name !== old.name && (s.role === "master" || s.role === "primary") && s.state === "running",
    );
    const node = ha.nodes.find((n) => n.name === next?.name);
    if (node) return node;
    await sleep(100);
  }
  throw new Error("no new primary within 120 s");
}

async function checkInvariants(ha: HaCluster, providerUrl: string, outcomes: Outcome[]) {
  const { createPrismaClient, closeClient } = await import("../server/db");
  const { verifyLedger } = await import("../server/ledger/verify");
  const { runReconciliation } = await import("../server/reconciler");
  const { httpProvider } = await import("../server/provider");
  const prisma = createPrismaClient(ha.url, { preparedStatements: false });
  const failures: string[] = [];
  const report: string[] = [];
  try {
    const acknowledged = outcomes.filter((o) => o.status === 200);
    const ids = acknowledged.flatMap((o) => (o.paymentId ? [o.paymentId] : []));
    if (ids.length !== acknowledged.length) failures.push("a 200 answer carried no payment id");
    const booked = await prisma.payment.findMany({
      where: { id: { in: ids } },
      include: { ledgerEntries: true },
    });
    const bookedIds = new Set(
      booked.filter((p) => p.status === "succeeded" && p.ledgerEntries.length > 0).map((p) => p.id),
    );
    const lost = acknowledged.filter((o) => !o.paymentId || !bookedIds.has(o.paymentId));
    if (lost.length > 0)
      failures.push(
        `${lost.length} payments answered 200 are not booked: ${lost.map((o) => o.paymentId).join(", ")}`,
      );

    const twice = await prisma.$queryRaw<{ order_id: string; n: bigint }[]>`
      SELECT order_id::text, count(*) AS n FROM payments WHERE status = 'succeeded' GROUP BY order_id HAVING count(*) > 1`;
    if (twice.length > 0)
      failures.push(`orders paid twice in our books: ${twice.map((r) => r.order_id).join(", ")}`);

    const ledger = await verifyLedger(prisma);
    report.push(`ledger: ${ledger.transactions} transactions, balanced: ${ledger.balanced}`);
    if (!ledger.balanced) failures.push(`books not balanced: ${JSON.stringify(ledger.totals)}`);

    const unfinished = outcomes.filter((o) => o.status === "unfinished");
    const keys = await prisma.$queryRaw<{ key: string; state: string }[]>`
      SELECT key, state::text FROM idempotency_keys WHERE key = ANY(${outcomes.map((o) => o.key)})`;
    const stateOf = new Map(keys.map((k) => [k.key, k.state]));
    const finishedButOpen = outcomes.filter(
      (o) => o.status !== "unfinished" && stateOf.get(o.key) !== "completed",
    );
    const invisible = unfinished.filter((o) => !stateOf.has(o.key));
    report.push(`keys: ${keys.length} found, ${unfinished.length} unfinished by their clients`);
    if (finishedButOpen.length > 0)
      failures.push(`${finishedButOpen.length} keys answered finally but not completed in the store`);
    if (invisible.length > 0) failures.push(`${invisible.length} unfinished keys are not in the key store`);

    // The provider's own record: an order charged twice there is money taken twice, whatever
    // our books say (a key lost with its payment row is claimed again under a new provider key).
    const provider = httpProvider({ baseUrl: providerUrl });
    const charged = new Map<string, string[]>();
    for await (const charge of provider.listCharges({ createdGte: new Date(started) })) {
      const order = charge.metadata.order_id;
      if (charge.status !== "succeeded" || !order) continue;
      charged.set(order, [...(charged.get(order) ?? []), charge.id]);
    }
    const chargedTwice = [...charged.entries()].filter(([, ids]) => ids.length > 1);
    report.push(`provider: ${[...charged.values()].flat().length} charges for ${charged.size} orders`);
    if (chargedTwice.length > 0)
      failures.push(
        `${chargedTwice.length} orders charged more than once at the provider: ${chargedTwice.map(([o, ids]) => `${o} (${ids.join(", ")})`).join("; ")}`,
      );

    // The reconciler sees what the books lack against the provider's own store; the background
    // jobs (completer, receipts) get a little time to finish what the failover interrupted.
    let mismatches: { kind: string; paymentId: string | null; chargeId: string | null }[] = [];
    for (const deadline = Date.now() + 45_000; ; ) {
      const result = await runReconciliation(
        { prisma, provider },
        { graceSeconds: 0, receiptGraceSeconds: 0, pendingGraceSeconds: 0 },
      );
      mismatches = result.mismatches;
      if (result.providerError)
        failures.push(`reconciler could not read the provider: ${result.providerError}`);
      if (mismatches.length === 0 || Date.now() > deadline || result.providerError) break;
      await sleep(3000);
    }
    const byKind = countBy(mismatches.map((m) => m.kind));
    report.push(`reconciler: ${mismatches.length === 0 ? "clean" : JSON.stringify(byKind)}`);
    for (const m of mismatches.slice(0, 10))
      report.push(`  ${m.kind}: payment ${m.paymentId} charge ${m.chargeId}`);
    if (mismatches.length > 0) failures.push(`reconciler found ${mismatches.length} mismatches`);
    return { lost, failures, report };
  } finally {
    await closeClient(prisma);
  }
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}
