/**
 * Webhook delivery: every event is POSTed to the configured endpoint (PROVIDER_WEBHOOK_URL), signed
 * as Stripe signs (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the
 * endpoint's `whsec_…` secret), at least once: until the endpoint answers 2xx, with backoff, as
 * Stripe retries. Delivery state lives on the event's row (events.ts inserts it with one pending
 * webhook), claimed with a lease so several simulator processes share the work.
 *
 * Faults, for a receiver's tests: per request, header `X-Provider-Webhook-Fault` on the POST that
 * caused the events (`duplicate`, `delay=<ms>`, `reorder`, `drop`), stored with its events; globally,
 * env PROVIDER_WEBHOOK_FAULTS (`duplicate:<p>`, `delay:<min>-<max>`, `reorder:<p>`, `drop:<p>`, or the header's
 * items, which always apply). A batch is sent one event after another, oldest first unless
 * reordered (then newest first); a delayed event is set aside for its delay (its first attempt
 * only) while the others go on. A dropped event is never
 * sent: it stays undelivered (`delivery_success=false`), as one whose retries ran out.
 */
import { createHmac } from "node:crypto";
import type { Pool } from "pg";
import { FaultSyntaxError } from "./faults";
import { SCHEMA } from "./pg";

export interface WebhookFaults {
  duplicate: number;
  delay: { minMs: number; maxMs: number } | null;
  reorder: number;
  drop: number;
}

export const NO_WEBHOOK_FAULTS: WebhookFaults = Object.freeze({
  duplicate: 0,
  delay: null,
  reorder: 0,
  drop: 0,
});

const MAX_DELAY_MS = 60_000;

function ms(text: string, source: string): number {
  if (!/^\d+$/.test(text) || Number(text) > MAX_DELAY_MS)
    throw new FaultSyntaxError(
      `${source}: delay must be whole milliseconds up to ${MAX_DELAY_MS}, got "${text}"`,
    );
  return Number(text);
}

function rate(text: string, source: string): number {
  const p = Number(text);
  if (text === "" || !Number.isFinite(p) || p < 0 || p > 1)
    throw new FaultSyntaxError(`${source}: a probability must be in [0, 1], got "${text}"`);
  return p;
}

/**
 * `duplicate`, `delay=<ms>`, `reorder`, `drop` (always), or `duplicate:<p>`, `delay:<min>-<max>`,
 * `reorder:<p>`, `drop:<p>` (at random). Empty → none. Throws FaultSyntaxError.
 */
export function parseWebhookFaults(value: string | undefined, source: string): WebhookFaults {
  const faults = { ...NO_WEBHOOK_FAULTS };
  for (const item of (value ?? "")
    .split(",")
    .map((i) => i.trim())
    .filter(Boolean)) {
    const m = /^(duplicate|delay|reorder|drop)(?:([=:])(.*))?$/.exec(item);
    if (!m)
      throw new FaultSyntaxError(
        `${source}: unknown webhook fault "${item}" (duplicate, delay, reorder, drop)`,
      );
    const [, name, sep, arg = ""] = m;
    if (name === "delay") {
      if (!sep) throw new FaultSyntaxError(`${source}: "delay" needs a value, e.g. delay=500`);
      const [lo = "", hi] = arg.split("-");
      const minMs = ms(lo, source);
      faults.delay = { minMs, maxMs: sep === ":" && hi !== undefined ? ms(hi, source) : minMs };
    } else {
      const p = sep === ":" ? rate(arg, source) : 1;
      if (sep === "=") throw new FaultSyntaxError(`${source}: "${name}" takes no value`);
      if (name === "duplicate") faults.duplicate = p;
      else if (name === "drop") faults.drop = p;
      else faults.reorder = p;
    }
  }
  return faults;
}

/** Stripe's signature header for `payload` signed at `timestamp` (Unix seconds). */
export function signatureHeader(payload: string, secret: string, timestamp: number): string {
  const v1 = createHmac("sha256", secret).update(`${timestamp}.${payload}`, "utf8").digest("hex");
  return `t=${timestamp},v1=${v1}`;
}

export interface WebhookOptions {
  pool: Pool;
  url: string;
  secret: string;
  faults?: WebhookFaults;
  /** Per attempt. Default 10 000 ms. */
  timeoutMs?: number;
  /** The first retry's wait; each next one doubles, up to an hour. Default 1000 ms. */
  retryBaseMs?: number;
  /** Attempts before an event is given up (it stays pending: `delivery_success=false`). Default 20. */
  maxAttempts?: number;
  /** How long a claimed batch is held before another sender may take it. Default 30 s. */
  leaseMs?: number;
  onError?: (err: unknown) => void;
  random?: () => number;
}

interface Claimed {
  id: string;
  created: Date;
  object: Record<string, unknown>;
  attempts: number;
  fault: string | null;
  lastError: string | null;
}

const BATCH = 20;
const POLL_MS = 500;

/** Starts the sender; `notify()` after a commit that wrote events, `stop()` to end it (awaits the batch). */
export function startWebhookDelivery(opts: WebhookOptions) {
  const faults = opts.faults ?? NO_WEBHOOK_FAULTS;
  const random = opts.random ?? Math.random;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const retryBaseMs = opts.retryBaseMs ?? 1000;
  const maxAttempts = opts.maxAttempts ?? 20;
  const leaseMs = opts.leaseMs ?? 30_000;
  const onError = opts.onError ?? ((err: unknown) => console.error("provider: webhook delivery failed", err));
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;

  async function claim(): Promise<Claimed[]> {
    const result = await opts.pool.query<Claimed>(
      `UPDATE ${SCHEMA}.events e
          SET webhook_next_at = clock_timestamp() + make_interval(secs => $1::float8 / 1000)
        WHERE e.id IN (SELECT id FROM ${SCHEMA}.events
                        WHERE pending_webhooks > 0 AND webhook_next_at <= clock_timestamp()
                        ORDER BY created, id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING e.id, e.created, e.object, e.webhook_attempts AS attempts, e.webhook_fault AS fault,
                  e.webhook_last_error AS "lastError"`,
      [leaseMs],
    );
    // Oldest first: a change's events carry successive milliseconds (events.ts).
    return result.rows.sort((a, b) => a.created.getTime() - b.created.getTime() || (a.id < b.id ? -1 : 1));
  }

  async function post(payload: string): Promise<string | null> {
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const res = await fetch(opts.url, {
        method: "POST",
        headers: {
          "content-type": "application/json; charset=utf-8",
          "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
          "stripe-signature": signatureHeader(payload, opts.secret, timestamp),
        },
        body: payload,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.ok ? null : `HTTP ${res.status}`;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  async function deliver(event: Claimed): Promise<void> {
    const own = event.fault ? parseWebhookFaults(event.fault, "X-Provider-Webhook-Fault") : null;
    const plan = own ?? faults;
    const delay = plan.delay;
    // A first attempt is set aside for its delay, without holding the events behind it.
    if (delay && event.attempts === 0 && event.lastError === null) {
      await opts.pool.query(
        `UPDATE ${SCHEMA}.events SET webhook_last_error = 'delayed (fault)',
                webhook_next_at = clock_timestamp() + make_interval(secs => $2::float8 / 1000) WHERE id = $1`,
        [event.id, delay.minMs + random() * (delay.maxMs - delay.minMs)],
      );
      return;
    }
    if (plan.drop > 0 && random() < plan.drop) {
      await opts.pool.query(
        `UPDATE ${SCHEMA}.events SET webhook_attempts = webhook_attempts + 1, webhook_next_at = NULL,
                webhook_last_error = 'dropped (fault)' WHERE id = $1`,
        [event.id],
      );
      return;
    }
    const payload = JSON.stringify({ ...event.object, pending_webhooks: 1 });
    const copies = plan.duplicate > 0 && random() < plan.duplicate ? 2 : 1;
    // Delivered once any copy is acknowledged.
    let failure: string | null = "not sent";
    for (let i = 0; i < copies; i++) {
      const answer = await post(payload);
      failure = failure === null ? null : answer;
    }
    const attempts = event.attempts + 1;
    if (failure === null) {
      await opts.pool.query(
        `UPDATE ${SCHEMA}.events
            SET pending_webhooks = 0, webhook_attempts = $2::int, webhook_next_at = NULL, webhook_last_error = NULL,
                object = jsonb_set(object, '{pending_webhooks}', '0')
          WHERE id = $1`,
        [event.id, attempts],
      );
      return;
    }
    const waitMs = Math.min(retryBaseMs * 2 ** (attempts - 1), 3_600_000);
    await opts.pool.query(
      `UPDATE ${SCHEMA}.events
          SET webhook_attempts = $2::int, webhook_last_error = $3,
              webhook_next_at = CASE WHEN $2::int >= $4::int THEN NULL
                                     ELSE clock_timestamp() + make_interval(secs => $5::float8 / 1000) END
        WHERE id = $1`,
      [event.id, attempts, failure, maxAttempts, waitMs],
    );
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      for (;;) {
        const batch = await claim();
        if (batch.length === 0) break;
        const asked = batch.some(
          (e) => e.fault && parseWebhookFaults(e.fault, "X-Provider-Webhook-Fault").reorder > 0,
        );
        const reorder = asked || (faults.reorder > 0 && random() < faults.reorder);
        const order = reorder ? batch.reverse() : batch;
        for (const event of order) await deliver(event);
        if (stopped) return;
      }
    } while (again && !stopped);
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain()
      .catch(onError)
      .finally(() => {
        running = null;
      });
  }

  const timer = setInterval(run, POLL_MS);
  timer.unref();
  run();
  return {
    notify: run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
