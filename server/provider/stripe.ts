/**
 * The PaymentProvider over Stripe's API, through the official SDK (`stripe`, pinned in
 * package.json; `apiVersion` pinned to the SDK's own). A payment is a PaymentIntent created and
 * confirmed in one request with our derived key as its `idempotencyKey`; a refund is a Refund of it.
 *
 * Errors are told apart by what the SDK puts on them (`type`, `statusCode`, `code`, the cause's
 * errno in `detail`), never by class identity (decision 0095). The SDK's own retries and timeout
 * are set against our lease and the browser's attempt deadline (decision 0170).
 */
import Stripe from "stripe";
import { AttemptLog, NEVER_CONNECTED } from "./attempt-log";
import { ProviderError } from "./errors";
import { chargeOf, KEY_METADATA, refundOf, withoutKey } from "./stripe-objects";
import type { CallOptions, ChargeStatus, PaymentProvider } from "./types";

export interface StripeProviderOptions {
  /** The API's origin, e.g. http://127.0.0.1:4010; unset: Stripe's own (https://api.stripe.com). */
  baseUrl?: string;
  /** The secret key (`sk_test_…` / `sk_live_…`), sent as `Authorization: Bearer`. */
  secretKey: string;
  /** Idle time without an answer before a request fails (the SDK's `timeout`). Default 10 000 ms. */
  timeoutMs?: number;
  /** The SDK's `maxNetworkRetries`. Default 0: our callers retry with the same key (decision 0170). */
  maxNetworkRetries?: number;
  /** Page size of lists and searches (1-100, default 100). */
  pageSize?: number;
}

/** The SDK's own API version: the adapter is written against the types of that version. */
export const STRIPE_API_VERSION = Stripe.API_VERSION;

export { chargeOf, KEY_METADATA } from "./stripe-objects";

const DEFAULT_TIMEOUT_MS = 10_000;

/** What createCharge returns; any other state (processing, never confirmed) is thrown as pending. */
const OUTCOMES: ReadonlySet<ChargeStatus> = new Set([
  "succeeded",
  "declined",
  "authorized",
  "requires_action",
]);

/**
 * How the payment may leave the page. Without a return URL, no redirecting payment method at all
 * (a card that asks for 3-D Secure then stops at requires_action with no page to send anyone to).
 * With one, cards only, by name: Stripe refuses a return_url beside allow_redirects "never", and
 * automatic payment methods would let the account's redirecting methods in (the SDK's 23.x types
 * name the list allowed_payment_method_types).
 */
function redirectParams(returnUrl: string | undefined): Partial<Stripe.PaymentIntentCreateParams> {
  if (returnUrl === undefined)
    return { automatic_payment_methods: { enabled: true, allow_redirects: "never" } };
  return { return_url: returnUrl, allowed_payment_method_types: ["card"] };
}

/** What the SDK's errors carry (StripeError and its kinds), read without their classes. */
interface SdkError {
  type?: unknown;
  rawType?: unknown;
  statusCode?: unknown;
  code?: unknown;
  param?: unknown;
  message?: unknown;
  headers?: Record<string, string | undefined>;
  detail?: { code?: unknown; message?: unknown } | undefined;
  payment_intent?: Stripe.PaymentIntent;
}

const isSdkError = (err: unknown): err is SdkError =>
  typeof err === "object" &&
  err !== null &&
  typeof (err as SdkError).type === "string" &&
  String((err as SdkError).type).startsWith("Stripe");

export function stripeProvider(opts: StripeProviderOptions): PaymentProvider {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const pageSize = opts.pageSize ?? 100;
  const target = opts.baseUrl ? new URL(opts.baseUrl) : null;
  const protocol = target?.protocol === "http:" ? "http" : "https";
  const attempts = new AttemptLog(protocol);
  const stripe = new Stripe(opts.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: opts.maxNetworkRetries ?? 0,
    timeout: timeoutMs,
    telemetry: false,
    httpClient: attempts.client,
    ...(target && {
      host: target.hostname,
      port: target.port || (protocol === "http" ? 80 : 443),
      protocol,
    }),
  });

  function failure(what: string, err: unknown, left?: boolean): ProviderError {
    if (!isSdkError(err)) {
      return new ProviderError(`${what}: ${err instanceof Error ? err.message : String(err)}`, {
        kind: "unavailable",
        cause: err,
      });
    }
    if (err.type === "StripeConnectionError") {
      const errno = typeof err.detail?.code === "string" ? err.detail.code : undefined;
      if (errno === "ETIMEDOUT")
        return new ProviderError(`${what}: no answer within ${timeoutMs} ms`, {
          kind: "timeout",
          cause: err,
        });
      const refused = errno !== undefined && NEVER_CONNECTED.has(errno) && left !== true;
      return new ProviderError(`${what}: provider unreachable (${errno ?? String(err.message)})`, {
        kind: "unavailable",
        cause: err,
        requestMayHaveLeft: !refused,
      });
    }
    const status = typeof err.statusCode === "number" ? err.statusCode : undefined;
    const code =
      typeof err.code === "string"
        ? err.code
        : err.rawType === "idempotency_error"
          ? "idempotency_error"
          : undefined;
    const param = typeof err.param === "string" ? err.param : undefined;
    const retryAfter = err.headers?.["retry-after"];
    const retryAfterMs =
      retryAfter && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : undefined;
    const kind =
      status === undefined || status >= 500 || status === 429 || status === 408
        ? "unavailable"
        : status === 409
          ? "conflict"
          : "rejected";
    return new ProviderError(`${what}: HTTP ${status ?? "?"}: ${String(err.message)}`, {
      kind,
      status,
      code,
      param,
      retryAfterMs,
      cause: err,
    });
  }

  const headersOf = (callOpts?: CallOptions) =>
    callOpts?.fault ? { headers: { "X-Provider-Fault": callOpts.fault } } : {};

  /** Oldest first, as the interface promises (Stripe lists newest first). */
  async function* sorted<T extends { createdAt: string; id: string }>(items: AsyncIterable<T>) {
    const all: T[] = [];
    for await (const item of items) all.push(item);
    all.sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
    );
    yield* all;
  }

  async function* read<T>(what: string, items: AsyncIterable<T>): AsyncIterable<T> {
    try {
      yield* items;
    } catch (err) {
      throw failure(what, err);
    }
  }

  return {
    async createCharge(input, idempotencyKey, callOpts) {
      const what = "POST /v1/payment_intents";
      const intent = await attempts.send(
        idempotencyKey,
        () =>
          stripe.paymentIntents.create(
            {
              amount: input.amount,
              currency: input.currency.toLowerCase(),
              payment_method: input.paymentMethod,
              ...redirectParams(input.returnUrl),
              // Only when manual: the parameters of a payment made before this option stay the same,
              // so a retry of it with its key replays rather than meets an idempotency_error.
              ...(input.captureMethod === "manual" && { capture_method: "manual" as const }),
              confirm: true,
              metadata: { ...input.metadata, [KEY_METADATA]: idempotencyKey },
            },
            { idempotencyKey, ...headersOf(callOpts) },
          ),
        (err, left) => {
          // A decline: 402 card_error carrying the PaymentIntent, back in requires_payment_method.
          if (isSdkError(err) && err.statusCode === 402 && err.payment_intent) return err.payment_intent;
          throw failure(what, err, left);
        },
      );
      const charge = chargeOf(intent);
      if (OUTCOMES.has(charge.status) && !(charge.status === "requires_action" && !charge.nextActionUrl))
        return charge;
      // Processing, or an authentication with no page to send the customer to (no returnUrl).
      throw new ProviderError(`${what}: payment ${intent.id} is ${intent.status}, not final`, {
        kind: "pending",
        status: 200,
        code: intent.status,
      });
    },

    async captureCharge(id, input, idempotencyKey, callOpts) {
      const what = `POST /v1/payment_intents/${id}/capture`;
      const intent = await attempts.send(
        idempotencyKey,
        () =>
          stripe.paymentIntents.capture(
            id,
            {
              ...(input.amount !== undefined && { amount_to_capture: input.amount }),
              // Merged into the payment's metadata by Stripe; our key's entry stays the payment's.
              ...(input.metadata && { metadata: withoutKey(input.metadata) }),
            },
            { idempotencyKey, ...headersOf(callOpts) },
          ),
        (err, left) => {
          throw failure(what, err, left);
        },
      );
      return chargeOf(intent);
    },

    async cancelCharge(id, input, idempotencyKey, callOpts) {
      const what = `POST /v1/payment_intents/${id}/cancel`;
      const intent = await attempts.send(
        idempotencyKey,
        () =>
          stripe.paymentIntents.cancel(id, input.reason ? { cancellation_reason: input.reason } : {}, {
            idempotencyKey,
            ...headersOf(callOpts),
          }),
        (err, left) => {
          throw failure(what, err, left);
        },
      );
      return chargeOf(intent);
    },

    async getCharge(id) {
      try {
        return chargeOf(await stripe.paymentIntents.retrieve(id));
      } catch (err) {
        if (isSdkError(err) && err.statusCode === 404 && err.code === "resource_missing") return null;
        throw failure(`GET /v1/payment_intents/${id}`, err);
      }
    },

    listCharges(listOpts = {}) {
      const metadata = { ...listOpts.metadata };
      if (listOpts.idempotencyKey !== undefined) metadata[KEY_METADATA] = listOpts.idempotencyKey;
      const created = listOpts.createdGte ? Math.floor(listOpts.createdGte.getTime() / 1000) : undefined;
      const clauses = Object.entries(metadata).map(([k, v]) => `metadata[${quote(k)}]:${quote(v)}`);
      if (clauses.length === 0) {
        const list = stripe.paymentIntents.list({
          limit: pageSize,
          ...(created !== undefined && { created: { gte: created } }),
        });
        return sorted(mapped(read("GET /v1/payment_intents", list), chargeOf));
      }
      if (created !== undefined) clauses.push(`created>=${created}`);
      const found = stripe.paymentIntents.search({ query: clauses.join(" AND "), limit: pageSize });
      return sorted(mapped(read("GET /v1/payment_intents/search", found), chargeOf));
    },

    async createRefund(input, idempotencyKey, callOpts) {
      const refund = await attempts.send(
        idempotencyKey,
        () =>
          stripe.refunds.create(
            {
              payment_intent: input.charge,
              amount: input.amount,
              metadata: { ...input.metadata, [KEY_METADATA]: idempotencyKey },
            },
            { idempotencyKey, ...headersOf(callOpts) },
          ),
        (err, left) => {
          throw failure("POST /v1/refunds", err, left);
        },
      );
      return refundOf(refund);
    },

    listRefunds(listOpts = {}) {
      const wanted = { ...listOpts.metadata };
      if (listOpts.idempotencyKey !== undefined) wanted[KEY_METADATA] = listOpts.idempotencyKey;
      const created = listOpts.createdGte ? Math.floor(listOpts.createdGte.getTime() / 1000) : undefined;
      const list = stripe.refunds.list({
        limit: pageSize,
        ...(listOpts.charge !== undefined && { payment_intent: listOpts.charge }),
        ...(created !== undefined && { created: { gte: created } }),
      });
      const all = mapped(read("GET /v1/refunds", list), (r: Stripe.Refund) => r);
      return sorted(
        mapped(
          filtered(all, (r) => holds(r.metadata ?? {}, wanted)),
          refundOf,
        ),
      );
    },
    listEvents({ createdGte, types, undelivered }) {
      const list = stripe.events.list({
        limit: pageSize,
        ...(undelivered && { delivery_success: false }),
        created: { gte: Math.floor(createdGte.getTime() / 1000) },
        types: [...types],
      });
      return read("GET /v1/events", list);
    },
  };
}

/** A search query's quoted string: `'` and `\` escaped (docs.stripe.com/search). */
function quote(value: string): string {
  return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

function holds(metadata: Record<string, string>, wanted: Record<string, string>): boolean {
  return Object.entries(wanted).every(([k, v]) => metadata[k] === v);
}

async function* mapped<A, B>(items: AsyncIterable<A>, map: (a: A) => B): AsyncIterable<B> {
  for await (const item of items) yield map(item);
}

async function* filtered<A>(items: AsyncIterable<A>, keep: (a: A) => boolean): AsyncIterable<A> {
  for await (const item of items) if (keep(item)) yield item;
}
