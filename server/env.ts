import { z } from "zod";

/**
 * Values that appear in the source, the docs or .env.example: fine for development, never a
 * deployment's secret. A production start refuses every one of them (docs/decisions/0060).
 */
export const DEVELOPMENT_SECRETS = {
  ADMIN_TOKEN: "admin_test",
  METRICS_TOKEN: "metrics_test",
  SESSION_SECRET: "dev-only-session-secret-not-for-production",
} as const;
const KNOWN_DEFAULTS: ReadonlySet<string> = new Set([
  ...Object.values(DEVELOPMENT_SECRETS),
  "change-me",
  "changeme",
]);
/** A production secret: long, not a known default, and not a repeated few characters. */
export const MIN_SECRET_LENGTH = 32;
const MIN_DISTINCT_CHARACTERS = 12;
const SECRET_HINT = "e.g. `openssl rand -base64 32`";

function secretWeakness(value: string): string | null {
  if (KNOWN_DEFAULTS.has(value) || value.startsWith("change-me")) return "is a known development default";
  if (value.length < MIN_SECRET_LENGTH) return `is shorter than ${MIN_SECRET_LENGTH} characters`;
  if (new Set(value).size < MIN_DISTINCT_CHARACTERS) return "has too few distinct characters to be random";
  return null;
}

// APP_ENV is the deployment stage; NODE_ENV is only Next's build mode.

/** Floors in seconds that only CHAOS_COMPRESSED_TIME=on (outside production) may go below. */
const COMPRESSIBLE = { PAYMENT_ABANDON_AFTER_SECONDS: 60, RECONCILE_INTERVAL_SECONDS: 60 } as const;
const ZEnv = z
  .object({
    APP_ENV: z.enum(["development", "test", "production"]).default("development"),
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    // A session of its own (no transaction pooler) for migrations, the seed and session locks.
    DIRECT_DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    PAYMENT_PROVIDER_URL: z.url({ protocol: /^https?$/ }).optional(),
    PAYMENT_PROVIDER_SECRET: z.string().min(1).optional(),
    ADMIN_TOKEN: z
      .string()
      .min(8)
      // A Bearer value of that shape is only ever looked up as a customer's key (decision 0063).
      .refine((v) => !/^sk_(live|test)_/.test(v), "must not start with sk_live_ or sk_test_ (API keys do)")
      .optional(),
    METRICS_TOKEN: z.string().min(8).optional(),
    SESSION_SECRET: z.string().min(32).optional(),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    /**
     * Proxies in front of the app that append the client's address to X-Forwarded-For (HAProxy
     * in `npm run cluster`: 1). 0: the socket's own address; a client's header is never believed.
     */
    TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
    BACKGROUND_JOBS: z.enum(["on", "off"]).default("on"),
    /**
     * Named (server-side) prepared statements: parsed and planned once per connection. Only for
     * a direct connection, or PgBouncer 1.21+ with max_prepared_statements; off by default
     * because PgBouncer 1.18 in transaction mode cannot follow them (docs/decisions/0041).
     */
    DATABASE_PREPARED_STATEMENTS: z.enum(["on", "off"]).default("off"),
    /**
     * Bounds on a connection to a database that stopped answering (a dead primary, a half-open
     * socket): opening one, and waiting for any one statement's answer (past the database's own
     * statement_timeout of 30 s, so normally the server's limit is the one that fires).
     */
    DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
    DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(35_000),
    /** Idle time before TCP keepalive probes start on a database connection. */
    DATABASE_KEEPALIVE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(10_000),
    PAYMENT_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
    /** The completer's longest wait between two tries of an unfinished payment. */
    COMPLETER_MAX_BACKOFF_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
    /** After this long, the completer fails a payment that never reached the provider. */
    PAYMENT_ABANDON_AFTER_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .default(3600),
    /** How often the background reconciler runs. */
    RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
    /** `npm run chaos` only: time compressed below the floors of COMPRESSIBLE (never in production). */
    CHAOS_COMPRESSED_TIME: z.enum(["on", "off"]).default("off"),
    /** `off`: `npm start` applies no migrations; they are a release step (`npm run migrate`). */
    MIGRATE_ON_START: z.enum(["on", "off"]).default("on"),
    /** After SIGTERM, readiness answers 503 this long before the listener closes (a balancer notices). */
    SHUTDOWN_DELAY_SECONDS: z.coerce.number().int().min(0).max(60).default(0),
    IDEMPOTENCY_MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(64 * 1024),
    RATE_LIMIT_PAYMENTS_PER_MINUTE: z.coerce.number().int().min(1).default(30),
    RATE_LIMIT_ORDERS_PER_MINUTE: z.coerce.number().int().min(1).default(60),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    LOG_FORMAT: z.enum(["json", "pretty"]).optional(),
  })
  .superRefine((env, ctx) => {
    if (env.DIRECT_DATABASE_URL && !env.DATABASE_URL)
      ctx.addIssue({ code: "custom", path: ["DIRECT_DATABASE_URL"], message: "needs DATABASE_URL as well" });
    const compressed = env.CHAOS_COMPRESSED_TIME === "on" && env.APP_ENV !== "production";
    for (const [name, floor] of Object.entries(COMPRESSIBLE) as [keyof typeof COMPRESSIBLE, number][]) {
      if (env[name] < floor && !compressed)
        ctx.addIssue({ code: "custom", path: [name], message: `must be at least ${floor}` });
    }
    if (env.APP_ENV !== "production") return;
    for (const name of ["ADMIN_TOKEN", "SESSION_SECRET", "METRICS_TOKEN"] as const) {
      const value = env[name];
      if (!value) {
        // METRICS_TOKEN may stay unset: then only the admin scrapes.
        if (name !== "METRICS_TOKEN")
          ctx.addIssue({
            code: "custom",
            path: [name],
            message: `is required when APP_ENV=production: at least ${MIN_SECRET_LENGTH} random characters, ${SECRET_HINT}`,
          });
        continue;
      }
      const weakness = secretWeakness(value);
      if (weakness)
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `${weakness}: production needs at least ${MIN_SECRET_LENGTH} random characters, ${SECRET_HINT}`,
        });
    }
  })
  .transform((env) => ({
    ...env,
    ADMIN_TOKEN: env.ADMIN_TOKEN ?? DEVELOPMENT_SECRETS.ADMIN_TOKEN,
    // Production has no default: unset, only the admin may scrape.
    METRICS_TOKEN:
      env.METRICS_TOKEN ?? (env.APP_ENV === "production" ? undefined : DEVELOPMENT_SECRETS.METRICS_TOKEN),
    // Readable lines while developing; one JSON object per line wherever logs are collected.
    LOG_FORMAT: env.LOG_FORMAT ?? (env.APP_ENV === "development" ? "pretty" : "json"),
    SESSION_SECRET: env.SESSION_SECRET ?? DEVELOPMENT_SECRETS.SESSION_SECRET,
    isProduction: env.APP_ENV === "production",
  }));

export type TEnv = z.infer<typeof ZEnv>;

export function parseEnv(source: Record<string, string | undefined>): TEnv {
  // Empty strings count as unset, so `DATABASE_URL= npm test` means "no external database".
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const result = ZEnv.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".") || "(env)"}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return result.data;
}

export const env: TEnv = parseEnv(process.env);

export function requireDatabaseUrl(): string {
  if (!env.DATABASE_URL) {
    throw new Error("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`, or set it.");
  }
  return env.DATABASE_URL;
}

/**
 * The URL for work that needs a whole session (migrations, the seed, session-level locks,
 * LISTEN): DIRECT_DATABASE_URL when DATABASE_URL goes through a transaction pooler, else DATABASE_URL.
 */
export function requireDirectDatabaseUrl(): string {
  return env.DIRECT_DATABASE_URL ?? requireDatabaseUrl();
}
