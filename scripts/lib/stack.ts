import { randomBytes } from "node:crypto";
import { TEST_PROVIDER_KEY } from "../../provider/auth";
import { createPrismaClient } from "../../server/db";
import { applyMigrations } from "../../server/db/migrate";
import { parseEnv } from "../../server/env";
import { disableDemoCredentials, seedDemoData } from "../../server/seed";
import { type Database, startDatabase } from "./embedded-pg";
import { startPgbouncer } from "./pgbouncer";
import { startProvider } from "./provider-process";

/** Production keeps its embedded data apart from development's, locked (docs/decisions/0150). */
export function stackInstance(isProduction: boolean): "dev" | "test" | "production" {
  return process.env.CHECKOUT_INSTANCE === "test" ? "test" : isProduction ? "production" : "dev";
}

export interface Stack {
  /** Variables for the processes that use the stack (Next, Vitest, Playwright). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** A pgbouncer binary: the app then reaches the database through PgBouncer in transaction mode. */
  pgbouncer?: string | null;
  /** PgBouncer's port; 0 or unset: any free port. */
  pgbouncerPort?: number;
  /** Capacity settings beyond PgBouncer's defaults. */
  pgbouncerSettings?: Record<string, string | number>;
  /** A database already started (the HA cluster's entry), instead of DATABASE_URL or the embedded one. */
  database?: Database;
  /** The provider's own store, when it is not to share the app's database server. */
  providerDatabaseUrl?: string;
  /**
   * Where the app will answer (its origin): the provider started here delivers its signed events
   * to its webhook there, with a secret made for this run unless PROVIDER_WEBHOOK_SECRET is set.
   */
  appUrl?: string;
}

/**
 * Everything the app needs before Next starts: the database (embedded unless DATABASE_URL is
 * set), its migrations and seed, optionally PgBouncer in front of it, and the payment provider
 * process (unless PAYMENT_PROVIDER_URL is set). Fails before starting anything when the
 * environment is invalid.
 */
export async function startStack(
  instance: "dev" | "test" | "production",
  opts: StackOptions = {},
): Promise<Stack> {
  const env = parseEnv(process.env);
  const database = opts.database ?? (await startDatabase({ instance }));
  // With DIRECT_DATABASE_URL set, DATABASE_URL is already a pooler: sessions go to the direct one.
  const direct = env.DIRECT_DATABASE_URL ?? database.url;
  // Stopped in reverse order of starting, each once the one before is gone: the app first (by
  // the caller), then the provider and the pooler, the database last.
  const stops: [string, () => Promise<void>][] = [["database", () => database.stop()]];
  const stop = async () => {
    for (const [name, s] of stops.reverse()) {
      await s().catch((e: unknown) => console.error(e));
      console.log(`stopped: ${name}`);
    }
  };
  try {
    // MIGRATE_ON_START=off: migrations are a release step of their own (`npm run migrate`).
    if (env.MIGRATE_ON_START === "on") {
      const { applied } = await applyMigrations(direct);
      if (applied.length > 0) console.log(`migrations applied: ${applied.join(", ")}`);
    }
    const prisma = createPrismaClient(direct);
    if (await seedDemoData(prisma, { production: env.isProduction })) console.log("demo data seeded");
    if (env.isProduction) {
      // A database that development seeded keeps its accounts, never the public demo credentials.
      const disabled = await disableDemoCredentials(prisma);
      if (disabled.apiKeys.length + disabled.passwords.length > 0)
        console.warn(
          `production: demo credentials found in this database and disabled: ${[
            ...disabled.apiKeys.map((k) => `API key ${k}`),
            ...disabled.passwords.map((e) => `the demo password of ${e}`),
          ].join(", ")}`,
        );
    }
    await prisma.$disconnect();

    let appUrl = database.url;
    if (opts.pgbouncer && !env.DIRECT_DATABASE_URL) {
      const pooler = await startPgbouncer({
        databaseUrl: direct,
        binary: opts.pgbouncer,
        port: opts.pgbouncerPort,
        settings: opts.pgbouncerSettings,
      });
      stops.push(["PgBouncer", () => pooler.stop()]);
      appUrl = pooler.url;
      console.log(`PgBouncer (transaction mode) on port ${pooler.port}`);
    }

    let providerUrl = env.PAYMENT_PROVIDER_URL;
    const appSecret: Record<string, string> = {};
    if (!providerUrl) {
      // dev on a fixed port, so `npm run worker` can find it; tests on any free port.
      const port = Number(process.env.PROVIDER_PORT ?? (instance === "test" ? 0 : 4010));
      // The provider stands for a service of its own: its own connections, no pooler; in
      // production its own role and database too, and a secret key made for this run.
      const secret = providerSecretFor(env.isProduction);
      const webhooks = webhooksFor(opts.appUrl);
      const provider = await startProvider({
        databaseUrl: opts.providerDatabaseUrl ?? database.providerUrl ?? direct,
        port,
        env: { ...secret.provider, ...webhooks.provider },
      });
      Object.assign(appSecret, secret.app, webhooks.app);
      stops.push(["payment provider", () => provider.stop()]);
      providerUrl = provider.url;
    }
    console.log(
      `database ${database.embedded ? "embedded" : "external"}; payment provider at ${providerUrl}`,
    );
    // Prepared statements only where the app's connection is known to be a session of its own:
    // the embedded database with no pooler in between (docs/decisions/0041). Never through the
    // PgBouncer started here, whatever the environment says: Debian's 1.18 cannot follow them.
    const prepared =
      appUrl !== database.url
        ? "off"
        : process.env.DATABASE_PREPARED_STATEMENTS ||
          (database.embedded && !env.DIRECT_DATABASE_URL ? "on" : "off");
    return {
      env: {
        DATABASE_URL: appUrl,
        DIRECT_DATABASE_URL: direct,
        PAYMENT_PROVIDER_URL: providerUrl,
        CHECKOUT_PARENT_PID: String(process.pid),
        DATABASE_PREPARED_STATEMENTS: prepared,
        ...appSecret,
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The provider's webhook to the app (decision 0171): its URL and one signing secret, given to both
 * (the app also keeps any it was configured with, so a rotation's old secret still verifies).
 */
function webhooksFor(appUrl: string | undefined): {
  provider: Record<string, string>;
  app: Record<string, string>;
} {
  if (!appUrl) return { provider: {}, app: {} };
  const secret = process.env.PROVIDER_WEBHOOK_SECRET || `whsec_${randomBytes(24).toString("base64url")}`;
  const configured = process.env.PAYMENT_PROVIDER_WEBHOOK_SECRETS;
  return {
    provider: {
      PROVIDER_WEBHOOK_URL: new URL("/api/webhooks/stripe", appUrl).href,
      PROVIDER_WEBHOOK_SECRET: secret,
    },
    app: { PAYMENT_PROVIDER_WEBHOOK_SECRETS: configured ? `${secret},${configured}` : secret },
  };
}

/**
 * The provider's secret key and the one the app sends (decision 0150). Production: PROVIDER_SECRET
 * (or PAYMENT_PROVIDER_SECRET), else a random `sk_live_` key for this run, given to both. Elsewhere
 * the provider takes any `sk_test_` key and the app sends PAYMENT_PROVIDER_SECRET or a fixed one.
 */
function providerSecretFor(production: boolean): {
  provider: Record<string, string>;
  app: Record<string, string>;
} {
  const configured = process.env.PROVIDER_SECRET || process.env.PAYMENT_PROVIDER_SECRET;
  if (!production) {
    return { provider: {}, app: { PAYMENT_PROVIDER_SECRET: configured || TEST_PROVIDER_KEY } };
  }
  const secret = configured || `sk_live_${randomBytes(24).toString("base64url")}`;
  return { provider: { PROVIDER_SECRET: secret }, app: { PAYMENT_PROVIDER_SECRET: secret } };
}
