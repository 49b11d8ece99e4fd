import { parseArgs } from "node:util";
import type { Deployed } from "./processes";
import { freshSeed } from "./random";

/** How long and how hard one run attacks, and the compressed clock it runs the product on. */
export interface Profile {
  name: "short" | "long";
  seed: number;
  /** Length of the attack itself (the build, start-up, drain and checks come on top). */
  attackSeconds: number;
  instances: number;
  accounts: number;
  /** Shoppers paying at once. */
  shoppers: number;
  /** Shoppers whose card asks for 3-D Secure each time, beside the others. */
  challengers: number;
  /**
   * AUTHORIZATION_TTL_SECONDS: short enough that some holds expire while operators act on them
   * (and one cycle sees several), long enough that most are captured or canceled first.
   */
  authorizationTtlSeconds: number;
  /**
   * PROVIDER_AUTHORIZATION_TTL_SECONDS: the provider's own expiry (Stripe's 7 days), a little after
   * ours, so a hold whose expiry the app is late with (faults, kills) is released there first.
   */
  providerAuthorizationTtlSeconds: number;
  /** PAYMENT_ACTION_TIMEOUT_SECONDS: an abandoned 3-D Secure step is canceled after this. */
  actionTimeoutSeconds: number;
  leaseSeconds: number;
  completerMaxBackoffSeconds: number;
  /**
   * Below the app's provider timeout (10 s) plus the completer's idle time (5 s), so the completer
   * abandons a payment whose charge a hold kept; above the idle time plus a short Retry-After, so
   * it still charges a payment a late-window 429 released.
   */
  abandonAfterSeconds: number;
  reconcileIntervalSeconds: number;
  paymentsPerMinute: number;
  /** A held request is delivered this long after it arrived: past the timeout and the abandonment. */
  holdMs: number;
  /** PROVIDER_WEBHOOK_FAULTS of the provider's deliveries. */
  webhookFaults: string;
  /** PROVIDER_EVENTS_CATCH_UP_SECONDS: how often the app reads back the events no webhook brought. */
  eventsCatchUpSeconds: number;
  /** WEBHOOK_TIMEOUT_SECONDS: short, so the slow receiver's holds outlast it within the run. */
  webhookTimeoutSeconds: number;
  /** WEBHOOK_RETRY_SCHEDULE_SECONDS: Standard Webhooks' days compressed into seconds. */
  webhookRetrySchedule: string;
  /** WEBHOOK_DISABLE_AFTER_SECONDS: the broken receiver's endpoint is disabled within the run. */
  webhookDisableAfterSeconds: number;
  build: boolean;
  pgPort: number;
  /** Which server answers the shoppers: `next start`, or the API tier (no Next build needed). */
  deployment: Deployed;
}

export const USAGE = `npm run chaos [-- --seed N] [--minutes M] [--no-build]
  no arguments: the short profile (about ${90} s of attack), as CI runs it
  --minutes M:   the long profile, M minutes of attack
  --seed N:      replay the attacks of a run (its first line prints its seed)
  --no-build:    start the build already in ${".next-chaos"} (after a run of the same tree)
  --pg-port P:   the embedded PostgreSQL's port (default: any free port)
  --deployment D: \`next\` (default): the API served by \`next start\`; \`api\`: by the API tier (scripts/api.ts)`;

export function parseProfile(argv: string[]): Profile {
  const { values } = parseArgs({
    args: argv,
    options: {
      seed: { type: "string" },
      minutes: { type: "string" },
      "no-build": { type: "boolean", default: false },
      "pg-port": { type: "string" },
      deployment: { type: "string", default: "next" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0)
      throw new Error(`--${name} must be a non-negative number, got "${raw}"`);
    return n;
  };
  const minutes = number("minutes", values.minutes, 0);
  const deployment = values.deployment;
  if (deployment !== "next" && deployment !== "api")
    throw new Error(`--deployment must be next or api, got "${deployment}"`);
  const long = minutes > 0;
  return {
    name: long ? "long" : "short",
    seed: Math.floor(number("seed", values.seed, freshSeed())),
    attackSeconds: long ? Math.round(minutes * 60) : 90,
    instances: 2,
    accounts: 10,
    shoppers: long ? 6 : 5,
    challengers: 2,
    authorizationTtlSeconds: 30,
    providerAuthorizationTtlSeconds: 36,
    actionTimeoutSeconds: 15,
    leaseSeconds: 3,
    completerMaxBackoffSeconds: 2,
    abandonAfterSeconds: 14,
    reconcileIntervalSeconds: 5,
    paymentsPerMinute: 12,
    holdMs: 25_000,
    /**
     * The provider's webhooks to one app instance (which the monkey SIGKILLs too): duplicated,
     * reordered, delayed up to 8 s (past the completer), and some never sent (only the catch-up
     * or the completer then finish).
     */
    webhookFaults: "duplicate:0.2,reorder:0.3,delay:0-8000,drop:0.15",
    eventsCatchUpSeconds: 5,
    webhookTimeoutSeconds: 2,
    webhookRetrySchedule: "1,2,4,8",
    webhookDisableAfterSeconds: 45,
    build: !values["no-build"],
    pgPort: Math.floor(number("pg-port", values["pg-port"], 0)),
    deployment,
  };
}
