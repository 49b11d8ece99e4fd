import "#server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { sequenceWeakness } from "./secret-patterns";

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
  return sequenceWeakness(value);
}

const SECRET_NAMES = ["ADMIN_TOKEN", "SESSION_SECRET", "METRICS_TOKEN"] as const;

/**
 * APP_ENV is the deployment stage. Every server Next starts (`next start`, `npm start`, a
 * container's `node server.js`) runs with NODE_ENV=production, so that alone means production:
 * only an explicit APP_ENV=development gets development's defaults there (decision 0145).
 * Elsewhere (tests, `npm run dev`, tsx scripts) APP_ENV decides and defaults to development.
 */
export function stageOf(source: Record<string, string | undefined>): string | undefined {
  const asked = source.APP_ENV || undefined;
  if (source.NODE_ENV !== "production") return asked;
  const known = asked === undefined || ["development", "test", "production"].includes(asked);
  return asked === "development" || !known ? asked : "production";
}

/** `next build` runs with NODE_ENV=production but serves nothing: it needs no secrets. */
const BUILD_PHASE = "phase-production-build";

/** next.config loads this module before Next sets NEXT_PHASE: then the command line tells. */
function nextBuildCommand(argv: readonly string[]): boolean {
  return /(^|[\\/])next$/.test(argv[1] ?? "") && argv[2] === "build";
}

/** Floors in seconds that only CHAOS_COMPRESSED_TIME=on (outside production) may go below. */
const COMPRESSIBLE = { PAYMENT_ABANDON_AFTER_SECONDS: 60, RECONCILE_INTERVAL_SECONDS: 60 } as const;
export const ZEnv = z
  .object({
    APP_ENV: z.enum(["development", "test", "production"]).default("development"),
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    // A session of its own (no transaction pooler) for migrations, the seed and session locks.
    DIRECT_DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    PAYMENT_PROVIDER_URL: z.url({ protocol: /^https?$/ }).optional(),
    PAYMENT_PROVIDER_SECRET: z.string().min(1).optional(),
    /** The provider's webhook signing secrets, comma-separated: during a rotation, the new and the old. */
    PAYMENT_PROVIDER_WEBHOOK_SECRETS: z
      .string()
      .optional()
      .transform((v) =>
        (v ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(z.string().regex(/^whsec_[A-Za-z0-9+/=_-]{8,}$/, "must be whsec_ secrets, comma-separated")),
      ),
    /** How far back each catch-up pass reads the provider's events list, and how often it runs. */
    PROVIDER_EVENTS_LOOKBACK_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(3600),
    PROVIDER_EVENTS_CATCH_UP_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
    ADMIN_TOKEN: z
      .string()
      .min(8)
      // A Bearer value of that shape is only ever looked up as a customer's key (decision 0063).
      .refine((v) => !/^sk_(live|test)_/.test(v), "must not start with sk_live_ or sk_test_ (API keys do)")
      .optional(),
    METRICS_TOKEN: z.string().min(8).optional(),
    SESSION_SECRET: z.string().min(32).optional(),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    /** The address a server listens on (Next's standalone server.js and the API tier read it). */
    HOSTNAME: z.string().min(1).optional(),
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
    /** The merchant's capture method when a payment does not name one (decision 0176). */
    PAYMENT_CAPTURE_METHOD: z.enum(["automatic", "manual"]).default("automatic"),
    /** How long an authorization may wait for its capture before it is canceled (Stripe: 7 days). */
    AUTHORIZATION_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(31 * 86_400)
      .default(7 * 86_400),
    /** How long a payment waits for the shopper's 3-D Secure step before it is canceled. */
    PAYMENT_ACTION_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
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
    /** Merchant webhooks may be delivered to loopback (development, tests, chaos); decision 0187. */
    WEBHOOK_ALLOW_LOOPBACK: z.enum(["on", "off"]).optional(),
    /** The delays between a message's attempts, after the first (Standard Webhooks' schedule). */
    WEBHOOK_RETRY_SCHEDULE_SECONDS: z
      .string()
      .default("5,300,1800,7200,18000,36000,36000")
      .transform((v) =>
        v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
          .map(Number),
      )
      .pipe(
        z
          .array(
            z
              .number()
              .min(0)
              .max(7 * 86_400),
          )
          .min(1, "needs at least one delay"),
      ),
    /** An endpoint failing every attempt this long is disabled, with a notice to its merchant. */
    WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .default(5 * 86_400),
    /** One delivery attempt's bound: resolution, connection, request and answer together. */
    WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().min(0.5).max(60).default(15),
    /** Delivered merchant webhook messages and their attempts are pruned after this many days. */
    WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    LOG_FORMAT: z.enum(["json", "pretty"]).optional(),
    NEXT_PHASE: z.string().optional(),
    /** The deployment's own email domains (comma-separated): sign-up refuses them (decision 0147). */
    RESERVED_EMAIL_DOMAINS: z
      .string()
      .default("")
      .transform((v) =>
        v
          .split(",")
          .map((d) =>
            d
              .trim()
              .toLowerCase()
              .replace(/^@|\.$/g, ""),
          )
          .filter(Boolean),
      ),
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
    // One secret per job: a scraper holding METRICS_TOKEN must not hold the admin's as well.
    for (const [i, name] of SECRET_NAMES.entries()) {
      const value = env[name]?.toLowerCase();
      const same = SECRET_NAMES.slice(0, i).find((other) => {
        const theirs = env[other]?.toLowerCase();
        return value && theirs && (value.includes(theirs) || theirs.includes(value));
      });
      if (same) ctx.addIssue({ code: "custom", path: [name], message: `must differ from ${same}` });
    }
    for (const name of SECRET_NAMES) {
      const value = env[name];
      if (!value) {
        // METRICS_TOKEN may stay unset: then only the admin scrapes. The build serves nothing.
        if (name !== "METRICS_TOKEN" && env.NEXT_PHASE !== BUILD_PHASE)
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
    // Production without a secret gets this far only in `next build`: a value nobody knows.
    ADMIN_TOKEN:
      env.ADMIN_TOKEN ?? (env.APP_ENV === "production" ? unguessable() : DEVELOPMENT_SECRETS.ADMIN_TOKEN),
    // Production has no default: unset, only the admin may scrape.
    METRICS_TOKEN:
      env.METRICS_TOKEN ?? (env.APP_ENV === "production" ? undefined : DEVELOPMENT_SECRETS.METRICS_TOKEN),
    // Readable lines while developing; one JSON object per line wherever logs are collected.
    LOG_FORMAT: env.LOG_FORMAT ?? (env.APP_ENV === "development" ? "pretty" : "json"),
    SESSION_SECRET:
      env.SESSION_SECRET ??
      (env.APP_ENV === "production" ? unguessable() : DEVELOPMENT_SECRETS.SESSION_SECRET),
    WEBHOOK_ALLOW_LOOPBACK: env.WEBHOOK_ALLOW_LOOPBACK ?? (env.APP_ENV === "production" ? "off" : "on"),
    isProduction: env.APP_ENV === "production",
  }));

export type TEnv = z.infer<typeof ZEnv>;

/**
 * What each variable means, for docs/configuration.md (`npm run docs:generate`, checked by
 * `npm run lint`). `default` is only for a default the schema cannot state (it depends on the
 * command or the stage); otherwise the schema's own default is shown.
 */
export const ENV_DOCS: Record<keyof z.input<typeof ZEnv>, { description: string; default?: string }> = {
  APP_ENV: {
    description:
      "`production` creates no demo data and refuses demo credentials, sets Secure cookies and HSTS, and requires strong `ADMIN_TOKEN` and `SESSION_SECRET`",
    default:
      "`production` wherever `NODE_ENV=production` (every server Next starts) unless set to `development`, else `development`",
  },
  DATABASE_URL: {
    description:
      "use this PostgreSQL server, or PgBouncer in transaction mode in front of it; nothing is started",
    default: "unset: `npm run dev`, `start` and `test` start an embedded PostgreSQL",
  },
  DIRECT_DATABASE_URL: {
    description:
      "the server itself when `DATABASE_URL` is a pooler: migrations, the seed, anything needing a session",
    default: "`DATABASE_URL`",
  },
  PAYMENT_PROVIDER_URL: {
    description:
      "the Stripe API the app calls through the `stripe` SDK (its host, port and protocol): a simulator already running, or `https://api.stripe.com` so that `npm start` starts none (decision 0170)",
    default:
      "unset: `npm run dev`, `npm start` and `npm test` start the simulator and set it; a server started another way calls Stripe itself",
  },
  PAYMENT_PROVIDER_SECRET: {
    description:
      "the Stripe secret key the SDK sends as `Authorization: Bearer` (`sk_test_…` for Stripe's test mode); for the simulator, its own `PROVIDER_SECRET` (in production it takes only that key)",
    default:
      "unset: `npm start` makes one per run for the simulator it starts; `sk_test_…` outside production",
  },
  PAYMENT_PROVIDER_WEBHOOK_SECRETS: {
    description:
      "the signing secrets (`whsec_…`, comma-separated) of the provider's webhooks to `POST /api/webhooks/stripe`; during a rotation both the new and the old",
    default:
      "unset: every webhook is refused (400); `npm run dev`, `start` and `cluster` set one for the simulator they start",
  },
  PROVIDER_EVENTS_LOOKBACK_SECONDS: {
    description:
      "how far back each catch-up pass reads the provider's events list for events no webhook brought",
  },
  PROVIDER_EVENTS_CATCH_UP_SECONDS: {
    description: "how often the catch-up of the provider's events runs (each server and worker process)",
  },
  ADMIN_TOKEN: {
    description:
      "the first owner's bootstrap sign-in and the machine-to-machine admin API token (owner powers); in production at least 32 random characters; changing it ends the sessions it made, not named operators' (decision 0200)",
    default: "`admin_test` (not in production)",
  },
  METRICS_TOKEN: {
    description: "Bearer token that may scrape `/api/metrics` (the admin may too); unset: admin only",
    default: "`metrics_test` (unset in production)",
  },
  SESSION_SECRET: {
    description:
      "signs session cookies (the auth library's key is derived from it); at least 32 characters, random in production",
    default: "a development secret (not in production)",
  },
  PORT: { description: "HTTP port" },
  HOSTNAME: {
    description:
      "the address the standalone `server.js` and the API tier (`npm run start:api`, `node dist/api.mjs`) listen on: `0.0.0.0` in the image, `127.0.0.1` for loopback only",
    default: "unset: every address (the standalone `server.js`: `0.0.0.0`)",
  },
  TRUSTED_PROXY_HOPS: {
    description:
      "proxies in front that append to `X-Forwarded-For` (the cluster's HAProxy: 1); 0 trusts the socket's address only",
  },
  BACKGROUND_JOBS: {
    description: "`off` leaves the completer, the sweep and the reconciler to `npm run worker`",
  },
  DATABASE_PREPARED_STATEMENTS: {
    description:
      "`on`: statements prepared once per connection; only for a direct connection or PgBouncer 1.21+ (decision 0041)",
    default: "`off`; `on` with the embedded database",
  },
  DATABASE_CONNECT_TIMEOUT_MS: {
    description: "opening a database connection, or waiting for a free one in a pool, gives up after this",
  },
  DATABASE_QUERY_TIMEOUT_MS: {
    description:
      "a statement without an answer fails after this in the client (a half-open socket, a lost primary)",
  },
  DATABASE_KEEPALIVE_MS: {
    description: "idle time before TCP keepalive probes start on a database connection",
  },
  PAYMENT_LEASE_SECONDS: {
    description: "lease of an in-flight payment (or refund) before a retry may take it over",
  },
  COMPLETER_MAX_BACKOFF_SECONDS: {
    description: "longest wait of the completer between two tries of an unfinished payment (or refund)",
  },
  PAYMENT_ABANDON_AFTER_SECONDS: {
    description:
      "after this (from the payment's creation, by the database's clock), the completer fails a payment (or refund) for which no request to the provider ever left; one whose request may be out is re-sent with the same key instead; at least 60",
  },
  PAYMENT_CAPTURE_METHOD: {
    description:
      "the merchant's setting: `automatic` charges at once, `manual` authorizes and holds the amount until an operator captures it; a payment may name its own (`captureMethod`)",
  },
  AUTHORIZATION_TTL_SECONDS: {
    description:
      "how long an authorization waits for its capture (from the provider's authorization); at the deadline the completer cancels it at the provider and releases the hold",
  },
  PAYMENT_ACTION_TIMEOUT_SECONDS: {
    description:
      "how long a payment waits for the shopper's 3-D Secure step (from the Pay press); then it is canceled at the provider, nothing charged, and the order is payable again",
  },
  RECONCILE_INTERVAL_SECONDS: { description: "how often the background reconciler runs; at least 60" },
  CHAOS_COMPRESSED_TIME: {
    description:
      "`on`, outside production only: the two above may go below their floor of 60 s (`npm run chaos`)",
  },
  IDEMPOTENCY_MAX_BODY_BYTES: { description: "larger request bodies are refused with 413" },
  RATE_LIMIT_PAYMENTS_PER_MINUTE: {
    description: "payment attempts per account per minute, then 429 with `Retry-After`",
  },
  RATE_LIMIT_ORDERS_PER_MINUTE: { description: "orders per account per minute, then 429 with `Retry-After`" },
  WEBHOOK_ALLOW_LOOPBACK: {
    description:
      "`on`: merchant webhook endpoints may be loopback addresses (127.0.0.0/8, ::1); private, link-local, CGNAT and metadata addresses are refused whatever it says, and production also requires https (decision 0187)",
    default: "`on` outside production, `off` in production",
  },
  WEBHOOK_RETRY_SCHEDULE_SECONDS: {
    description:
      "delays in seconds between the attempts of a merchant webhook after the first, comma-separated, each with ±10 % jitter; the message fails after the last (compressed by tests and chaos)",
  },
  WEBHOOK_DISABLE_AFTER_SECONDS: {
    description:
      "a merchant webhook endpoint whose every attempt failed for this long is disabled, with the reason shown on its account page",
  },
  WEBHOOK_TIMEOUT_SECONDS: {
    description:
      "one attempt to deliver a merchant webhook (resolution, connection, request and answer) gives up after this; a claimed message is due again after four times it, should its worker die (compressed by chaos)",
  },
  WEBHOOK_RETENTION_DAYS: {
    description:
      "delivered merchant webhook messages and their attempts, sent outbox rows and the consumers' processed-message marks are pruned once this many days old (decision 0222)",
  },
  LOG_LEVEL: { description: "the least severe level logged", default: "`info` (`warn` under `npm test`)" },
  MIGRATE_ON_START: {
    description:
      "`off`: `npm start` applies no migrations; run `npm run migrate` (or `node dist/migrate.mjs`) as a release step before starting",
  },
  SHUTDOWN_DELAY_SECONDS: {
    description:
      "after SIGTERM, readiness answers 503 this long before the listener closes: set it to your balancer's check interval",
  },
  NEXT_PHASE: {
    description:
      "set by Next itself (`phase-production-build` during `next build`, which needs no secrets); not for a deployment to set",
  },
  RESERVED_EMAIL_DOMAINS: {
    description:
      "email domains no one may sign up with, beside `.invalid` and `.localhost` (our own system accounts live there; decision 0147)",
    default: "unset",
  },
  LOG_FORMAT: {
    description: "`json`: one JSON object per line; `pretty`: readable lines (pino-pretty)",
    default: "`pretty` in development, else `json`",
  },
};

function unguessable(): string {
  return randomBytes(32).toString("base64url");
}

export function parseEnv(source: Record<string, string | undefined>, argv: readonly string[] = []): TEnv {
  // Empty strings count as unset, so `DATABASE_URL= npm test` means "no external database".
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const stage = stageOf(source);
  if (stage !== undefined) cleaned.APP_ENV = stage;
  if (nextBuildCommand(argv)) cleaned.NEXT_PHASE = BUILD_PHASE;
  const result = ZEnv.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".") || "(env)"}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return result.data;
}

export const env: TEnv = parseEnv(process.env, process.argv);

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
