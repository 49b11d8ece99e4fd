import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Database, startDatabase } from "../../scripts/lib/embedded-pg";
import { freePort } from "../../scripts/lib/guarded-process";
import { type Pooler, pgbouncerForTests, startPgbouncer } from "../../scripts/lib/pgbouncer";
import { type ProviderProcess, startProvider } from "../../scripts/lib/provider-process";
import { hashToken } from "../../server/auth/tokens";
import { createPrismaClient } from "../../server/db";
import { applyMigrations } from "../../server/db/migrate";
import { seedDemoData } from "../../server/seed";
import type { FaultProxy } from "./fault-proxy";
import { appInstance, type Restartable, workerProcess } from "./processes";
import type { Profile } from "./profile";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DIST_DIR = ".next-chaos";

export interface ShopperAccount {
  id: string;
  handle: string;
  token: string;
}

export interface Deployment {
  instances: (Restartable & { url: string; index: number })[];
  worker: Restartable;
  adminToken: string;
  /** The provider itself, not through the fault proxy: the checker's and the rogue's way in. */
  providerUrl: string;
  /** A session of its own on PostgreSQL, for reading our books at the end. */
  directDatabaseUrl: string;
  pooled: boolean;
  accounts: ShopperAccount[];
  /** Where the processes' logs go. */
  logDir: string;
  /** The provider stands for a service of its own: the checker never kills it, so its death is news. */
  providerAlive(): boolean;
  restartDatabase(): Promise<void>;
  stop(): Promise<void>;
}

/** `next build` into a folder of the checker's own, so an e2e build beside it is left alone. */
export function buildApp(): void {
  execFileSync("node_modules/.bin/next", ["build"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, NEXT_DIST_DIR: DIST_DIR, APP_ENV: "development" },
  });
}

/**
 * The whole product as deployed, on this machine: an embedded PostgreSQL of the checker's own
 * (fresh each run), PgBouncer in transaction mode when installed, the provider process,
 * `profile.instances` servers of the API (the production build's `next start`, or with
 * `--deployment api` the API tier; the first with the background jobs, the others without, as a
 * web tier beside `npm run worker`), and the worker. The app reaches the
 * provider only through the fault proxy. Every feature is on, with time compressed.
 */
export async function startDeployment(opts: {
  profile: Profile;
  proxy: (providerUrl: string) => Promise<FaultProxy>;
}): Promise<Deployment & { proxy: FaultProxy }> {
  const { profile } = opts;
  const logDir = join(ROOT, ".data", "chaos", "logs");
  rmSync(join(ROOT, ".data", "chaos"), { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch((e: unknown) => console.error(e));
    stops.length = 0;
  };
  try {
    // A fresh database each run, whatever folder the data ends up in (as root it may be in the
    // temp dir): the invariants read every row as this run's.
    const pgPort = profile.pgPort || (await freePort());
    rmSync(join(ROOT, ".data", "pg-chaos"), { recursive: true, force: true });
    const dbOptions = { instance: "chaos", port: pgPort, databases: [`chaos_${Date.now()}`] } as const;
    let database: Database = await startDatabase({ ...dbOptions, databases: [...dbOptions.databases] });
    stops.push(() => database.stop());
    const direct = database.url;
    await applyMigrations(direct);
    const prisma = createPrismaClient(direct);
    await seedDemoData(prisma, { production: false });
    const accounts = await createAccounts(prisma, profile.accounts);
    await prisma.$disconnect();

    const pgbouncer = pgbouncerForTests();
    let pooler: Pooler | null = null;
    if (pgbouncer) {
      pooler = await startPgbouncer({
        databaseUrl: direct,
        binary: pgbouncer,
        // Time compressed here too: PgBouncer waits 15 s after a failed server login by default.
        settings: { max_client_conn: 200, server_login_retry: 1 },
      });
      stops.push(() => (pooler as Pooler).stop());
    }
    // The instances' ports first: the provider delivers its events to one of them.
    const ports: number[] = [];
    for (let index = 0; index < profile.instances; index++) ports.push(await freePort());
    const webhookSecret = `whsec_${randomBytes(24).toString("base64url")}`;
    const provider: ProviderProcess = await startProvider({
      databaseUrl: direct,
      port: 0,
      env: {
        PROVIDER_WEBHOOK_URL: `http://127.0.0.1:${ports[ports.length - 1]}/api/webhooks/stripe`,
        PROVIDER_WEBHOOK_SECRET: webhookSecret,
        PROVIDER_WEBHOOK_FAULTS: profile.webhookFaults,
        PROVIDER_WEBHOOK_RETRY_MS: "500",
        PROVIDER_AUTHORIZATION_TTL_SECONDS: String(profile.providerAuthorizationTtlSeconds),
      },
    });
    stops.push(() => provider.stop());
    const proxy = await opts.proxy(provider.url);
    stops.push(() => proxy.stop());

    const adminToken = `chaos_admin_${randomBytes(24).toString("base64url")}`;
    const appEnv: Record<string, string> = {
      ...(process.env as Record<string, string>),
      // Explicit, whatever the shell says: the checker's accounts and secrets are its own.
      APP_ENV: "development",
      ADMIN_TOKEN: adminToken,
      SESSION_SECRET: randomBytes(32).toString("base64url"),
      METRICS_TOKEN: randomBytes(16).toString("base64url"),
      DATABASE_URL: pooler?.url ?? direct,
      DIRECT_DATABASE_URL: direct,
      DATABASE_PREPARED_STATEMENTS: pooler ? "off" : "on",
      PAYMENT_PROVIDER_URL: proxy.url,
      NEXT_DIST_DIR: DIST_DIR,
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
      CHAOS_COMPRESSED_TIME: "on",
      PAYMENT_LEASE_SECONDS: String(profile.leaseSeconds),
      COMPLETER_MAX_BACKOFF_SECONDS: String(profile.completerMaxBackoffSeconds),
      PAYMENT_ABANDON_AFTER_SECONDS: String(profile.abandonAfterSeconds),
      RECONCILE_INTERVAL_SECONDS: String(profile.reconcileIntervalSeconds),
      RATE_LIMIT_PAYMENTS_PER_MINUTE: String(profile.paymentsPerMinute),
      RATE_LIMIT_ORDERS_PER_MINUTE: "100000",
      PAYMENT_PROVIDER_WEBHOOK_SECRETS: webhookSecret,
      PROVIDER_EVENTS_CATCH_UP_SECONDS: String(profile.eventsCatchUpSeconds),
      AUTHORIZATION_TTL_SECONDS: String(profile.authorizationTtlSeconds),
      PAYMENT_ACTION_TIMEOUT_SECONDS: String(profile.actionTimeoutSeconds),
      WEBHOOK_ALLOW_LOOPBACK: "on",
      WEBHOOK_TIMEOUT_SECONDS: String(profile.webhookTimeoutSeconds),
      WEBHOOK_RETRY_SCHEDULE_SECONDS: profile.webhookRetrySchedule,
      WEBHOOK_DISABLE_AFTER_SECONDS: String(profile.webhookDisableAfterSeconds),
    };
    const instances: Deployment["instances"] = [];
    for (let index = 0; index < profile.instances; index++) {
      instances.push(
        appInstance({
          index,
          port: ports[index] as number,
          env: { ...appEnv, BACKGROUND_JOBS: index === 0 ? "on" : "off" },
          logDir,
          server: profile.deployment,
        }),
      );
    }
    stops.push(async () => {
      await Promise.all(instances.map((i) => i.stop()));
    });
    await Promise.all(instances.map((i) => i.start()));
    const worker = workerProcess({ env: appEnv, logDir });
    stops.push(() => worker.stop());
    await worker.start();

    return {
      instances,
      worker,
      adminToken,
      providerUrl: provider.url,
      directDatabaseUrl: direct,
      pooled: pooler !== null,
      accounts,
      logDir,
      proxy,
      providerAlive: () => {
        try {
          process.kill(provider.pid, 0);
          return true;
        } catch {
          return false;
        }
      },
      async restartDatabase() {
        // Fast shutdown and start on the same data folder and port: every connection breaks.
        await database.stop();
        database = await startDatabase({ ...dbOptions, databases: [...dbOptions.databases] });
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Shopper accounts with API tokens, written as the account page would (one token each). */
async function createAccounts(prisma: ReturnType<typeof createPrismaClient>, count: number) {
  const accounts: ShopperAccount[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const handle = `chaos_${i}`;
    const token = `sk_test_${randomBytes(24).toString("base64url")}`;
    await prisma.account.create({
      data: {
        id,
        handle,
        name: `Chaos shopper ${i}`,
        email: `${handle}@example.test`,
        apiTokens: { create: { id: randomUUID(), tokenHash: hashToken(token), label: "chaos" } },
      },
    });
    accounts.push({ id, handle, token });
  }
  return accounts;
}
