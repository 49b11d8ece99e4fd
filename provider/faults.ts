/**
 * Fault injection for the fake payment provider.
 *
 * Two sources:
 *  - per request, header `X-Provider-Fault`: a comma-separated list of
 *    `latency=<ms>`, `error=500` / `error=503` (bare `error` = 500) and `drop`.
 *    Example: `X-Provider-Fault: latency=200,drop`.
 *  - globally, env `PROVIDER_FAULTS`, for soak tests: random faults such as
 *    `error:0.1,drop:0.1,latency:0-300` (probabilities in [0,1]; latency as a
 *    range `min-max` or a fixed `ms`). Items written with `=` use the header
 *    syntax and apply to every request (`PROVIDER_FAULTS="latency=100"`).
 *
 * A request that carries the header ignores the env faults, so deterministic
 * tests are not perturbed by a randomly faulty provider.
 */

export type ErrorStatus = 500 | 503;

/** What to do to one request. */
export interface FaultPlan {
  /** Extra delay (ms) before the response is written (after the charge or refund committed). */
  latencyMs: number;
  /** Answer this status before doing anything; nothing is stored. */
  error: ErrorStatus | null;
  /** Do the work (a charge, a refund) and commit, then destroy the socket without answering. */
  drop: boolean;
}

/** Random faults, rolled per request. */
export interface FaultConfig {
  errorRate: number;
  dropRate: number;
  latency: { minMs: number; maxMs: number } | null;
  /** Faults that always apply (env items written with `=`). */
  always: FaultPlan;
}

export const NO_FAULTS: FaultPlan = Object.freeze({ latencyMs: 0, error: null, drop: false });

export const NO_FAULT_CONFIG: FaultConfig = Object.freeze({
  errorRate: 0,
  dropRate: 0,
  latency: null,
  always: NO_FAULTS,
});

export class FaultSyntaxError extends Error {
  override name = "FaultSyntaxError";
}

const MAX_LATENCY_MS = 60_000;

function parseMs(text: string, source: string): number {
  if (!/^\d+$/.test(text))
    throw new FaultSyntaxError(`${source}: latency must be whole milliseconds, got "${text}"`);
  const ms = Number(text);
  if (ms > MAX_LATENCY_MS)
    throw new FaultSyntaxError(`${source}: latency must be at most ${MAX_LATENCY_MS} ms`);
  return ms;
}

function splitItems(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function applyDeterministicItem(plan: FaultPlan, item: string, source: string): FaultPlan {
  const eq = item.indexOf("=");
  const name = (eq === -1 ? item : item.slice(0, eq)).trim().toLowerCase();
  const value = eq === -1 ? null : item.slice(eq + 1).trim();
  switch (name) {
    case "latency":
      if (value === null) throw new FaultSyntaxError(`${source}: "latency" needs a value, e.g. latency=200`);
      return { ...plan, latencyMs: parseMs(value, source) };
    case "error":
      if (value === null || value === "500") return { ...plan, error: 500 };
      if (value === "503") return { ...plan, error: 503 };
      throw new FaultSyntaxError(`${source}: error must be 500 or 503, got "${value}"`);
    case "drop":
      if (value !== null && value !== "true" && value !== "1") {
        throw new FaultSyntaxError(`${source}: "drop" takes no value`);
      }
      return { ...plan, drop: true };
    default:
      throw new FaultSyntaxError(`${source}: unknown fault "${name}" (expected latency, error or drop)`);
  }
}

/** Parses the `X-Provider-Fault` header. Empty / missing → no faults. Throws FaultSyntaxError. */
export function parseFaultHeader(value: string | undefined): FaultPlan {
  let plan: FaultPlan = NO_FAULTS;
  for (const item of splitItems(value ?? "")) plan = applyDeterministicItem(plan, item, "X-Provider-Fault");
  return plan;
}

function parseRate(text: string, name: string): number {
  const rate = Number(text);
  if (text === "" || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw new FaultSyntaxError(`PROVIDER_FAULTS: ${name} probability must be in [0, 1], got "${text}"`);
  }
  return rate;
}

/** Parses env `PROVIDER_FAULTS`. Empty / missing → no faults. Throws FaultSyntaxError. */
export function parseFaultEnv(value: string | undefined): FaultConfig {
  const config: FaultConfig = { errorRate: 0, dropRate: 0, latency: null, always: NO_FAULTS };
  for (const item of splitItems(value ?? "")) {
    const colon = item.indexOf(":");
    if (colon === -1) {
      config.always = applyDeterministicItem(config.always, item, "PROVIDER_FAULTS");
      continue;
    }
    const name = item.slice(0, colon).trim().toLowerCase();
    const arg = item.slice(colon + 1).trim();
    switch (name) {
      case "error":
        config.errorRate = parseRate(arg, name);
        break;
      case "drop":
        config.dropRate = parseRate(arg, name);
        break;
      case "latency": {
        const [lo, hi, ...rest] = arg.split("-");
        if (lo === undefined || rest.length > 0) {
          throw new FaultSyntaxError(`PROVIDER_FAULTS: latency must be "min-max" or "ms", got "${arg}"`);
        }
        const minMs = parseMs(lo.trim(), "PROVIDER_FAULTS");
        const maxMs = hi === undefined ? minMs : parseMs(hi.trim(), "PROVIDER_FAULTS");
        if (maxMs < minMs) throw new FaultSyntaxError(`PROVIDER_FAULTS: latency range "${arg}" is reversed`);
        config.latency = { minMs, maxMs };
        break;
      }
      default:
        throw new FaultSyntaxError(
          `PROVIDER_FAULTS: unknown fault "${name}" (expected latency, error or drop)`,
        );
    }
  }
  return config;
}

/** Rolls the random faults of a config into a concrete plan for one request. */
export function rollFaults(config: FaultConfig, random: () => number = Math.random): FaultPlan {
  const { always } = config;
  let error = always.error;
  if (error === null && config.errorRate > 0 && random() < config.errorRate) {
    error = random() < 0.5 ? 500 : 503;
  }
  const drop = always.drop || (config.dropRate > 0 && random() < config.dropRate);
  let latencyMs = always.latencyMs;
  if (config.latency) {
    const { minMs, maxMs } = config.latency;
    latencyMs += Math.round(minMs + random() * (maxMs - minMs));
  }
  return { latencyMs, error, drop };
}

/**
 * The plan for one request: a non-empty header wins; otherwise the random config
 * is rolled (pass null where env faults do not apply). Throws FaultSyntaxError.
 */
export function planFaults(header: string | undefined, config: FaultConfig | null): FaultPlan {
  if (header !== undefined && header.trim() !== "") return parseFaultHeader(header);
  return config ? rollFaults(config) : NO_FAULTS;
}
