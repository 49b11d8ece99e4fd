/**
 * App-side interface to a payment provider, and its HTTP implementation for
 * the fake provider in this folder. A real provider can replace it by
 * implementing PaymentProvider.
 */
import http from "node:http";
import https from "node:https";
import { z } from "zod";
import { TEST_PROVIDER_KEY } from "./auth";

export interface Charge {
  id: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  status: "succeeded" | "declined";
  failureCode: string | null;
  failureMessage: string | null;
  createdAt: string;
  metadata: Record<string, string>;
}

export interface CreateChargeInput {
  amount: number;
  currency: string;
  paymentMethod: string;
  metadata?: Record<string, string>;
}

export interface ListChargesOptions {
  createdGte?: Date;
  idempotencyKey?: string;
  metadata?: Record<string, string>;
}

export interface Refund {
  id: string;
  charge: string;
  amount: number;
  currency: string;
  status: "succeeded";
  createdAt: string;
  metadata: Record<string, string>;
}

export interface CreateRefundInput {
  charge: string;
  amount: number;
  metadata?: Record<string, string>;
}

export interface ListRefundsOptions {
  charge?: string;
  createdGte?: Date;
  idempotencyKey?: string;
  metadata?: Record<string, string>;
}

export interface PaymentProvider {
  /**
   * Creates (or, for a key seen before, replays) a charge. A decline is an
   * outcome, returned as a Charge with status "declined", not an exception.
   * Throws ProviderError otherwise.
   */
  createCharge(input: CreateChargeInput, idempotencyKey: string, opts?: { fault?: string }): Promise<Charge>;
  getCharge(id: string): Promise<Charge | null>;
  /**
   * Walks all pages, oldest first (created_at, id). The filters narrow it to the charges made
   * with one idempotency key, or whose metadata holds the given pairs.
   */
  listCharges(opts?: ListChargesOptions): AsyncIterable<Charge>;
  /**
   * Refunds part or all of a succeeded charge (or, for a key seen before, replays the refund).
   * A refusal throws ProviderError kind "rejected" with its `code`: "amount_too_large" (more than
   * the charge's unrefunded rest), "charge_not_refundable" (a declined charge), "resource_missing"
   * (no such charge). Other failures throw as createCharge's do.
   */
  createRefund(input: CreateRefundInput, idempotencyKey: string, opts?: { fault?: string }): Promise<Refund>;
  /** Walks all pages, oldest first (created_at, id), as listCharges; `charge` narrows to one charge's. */
  listRefunds(opts?: ListRefundsOptions): AsyncIterable<Refund>;
}

export type ProviderErrorKind = "unavailable" | "timeout" | "conflict" | "rejected";

// Next bundles this module once per layer, and the client may be built by another layer than
// the one that catches its errors: their kind is told by this brand, never by class identity.
const PROVIDER_ERROR = Symbol.for("idempotent-checkout.ProviderError");

/** A ProviderError from any copy of this module. */
export function isProviderError(value: unknown): value is ProviderError {
  return typeof value === "object" && value !== null && PROVIDER_ERROR in value;
}

/**
 * - unavailable: network error, connection reset, 5xx, unreadable answer. The charge may
 *   or may not exist: retry with the SAME idempotency key.
 * - timeout: no answer in time; same ambiguity as unavailable.
 * - conflict: 409, a request with this key is still in flight; retry after `retryAfterMs`.
 * - rejected: 4xx (bad input, key reused with other parameters, auth, a refund the charge cannot
 *   take); do not retry as is. `code` says which.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  readonly [PROVIDER_ERROR] = true;
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly status?: number;
  /** Provider error code when it sent one, e.g. "idempotency_key_in_use". */
  readonly code?: string;
  /** From Retry-After, when the provider sent it. */
  readonly retryAfterMs?: number;
  /**
   * False only with proof that no byte of the request reached the provider (the connection was
   * refused or the host not found); otherwise the request may have been received and acted on.
   */
  readonly requestMayHaveLeft: boolean;

  constructor(
    message: string,
    details: {
      kind: ProviderErrorKind;
      status?: number;
      code?: string;
      retryAfterMs?: number;
      cause?: unknown;
      requestMayHaveLeft?: boolean;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = details.kind;
    this.retryable = details.kind !== "rejected";
    this.requestMayHaveLeft = details.requestMayHaveLeft ?? true;
    if (details.status !== undefined) this.status = details.status;
    if (details.code !== undefined) this.code = details.code;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}

const WireCharge = z.object({
  id: z.string(),
  amount: z.number(),
  currency: z.string(),
  payment_method: z.string(),
  status: z.enum(["succeeded", "declined"]),
  failure_code: z.string().nullable(),
  failure_message: z.string().nullable(),
  created_at: z.string(),
  metadata: z.record(z.string(), z.string()),
});
type WireCharge = z.infer<typeof WireCharge>;

const DeclineBody = z.object({ charge: WireCharge });
const ChargeList = z.object({ data: z.array(WireCharge), has_more: z.boolean() });

const WireRefund = z.object({
  id: z.string(),
  charge: z.string(),
  amount: z.number(),
  currency: z.string(),
  status: z.literal("succeeded"),
  created_at: z.string(),
  metadata: z.record(z.string(), z.string()),
});
type WireRefund = z.infer<typeof WireRefund>;
const RefundList = z.object({ data: z.array(WireRefund), has_more: z.boolean() });

function refundFromWire(w: WireRefund): Refund {
  return {
    id: w.id,
    charge: w.charge,
    amount: w.amount,
    currency: w.currency,
    status: w.status,
    createdAt: w.created_at,
    metadata: w.metadata,
  };
}
const ErrorBody = z.object({ error: z.object({ message: z.string(), code: z.string().optional() }) });

function fromWire(w: WireCharge): Charge {
  return {
    id: w.id,
    amount: w.amount,
    currency: w.currency,
    paymentMethod: w.payment_method,
    status: w.status,
    failureCode: w.failure_code,
    failureMessage: w.failure_message,
    createdAt: w.created_at,
    metadata: w.metadata,
  };
}

interface HttpAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface HttpProviderOptions {
  baseUrl: string;
  /** The provider's secret key; unset: a test key, which only a development provider takes. */
  secret?: string;
  /** Per request, including reading the body. Default 10 000 ms. */
  timeoutMs?: number;
  /** Page size used by listCharges (1-100, default 100). */
  pageSize?: number;
}

export function httpProvider(opts: HttpProviderOptions): PaymentProvider {
  const baseUrl = opts.baseUrl.replace(/\/+$/, "");
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const pageSize = opts.pageSize ?? 100;

  async function call(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const what = `${method} ${path}`;
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    headers.authorization = `Bearer ${opts.secret || TEST_PROVIDER_KEY}`;
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    try {
      const answer = await send(`${baseUrl}${path}`, method, headers, body, timeoutMs);
      let parsed: unknown = null;
      try {
        parsed = answer.text ? JSON.parse(answer.text) : null;
      } catch {
        // Left null: callers treat an unparseable answer per status.
      }
      return { status: answer.status, headers: answer.headers, body: parsed } satisfies HttpAnswer;
    } catch (err) {
      // biome-ignore lint/plugin: private to this module, which both throws and catches it.
      if (err instanceof TimeoutError) {
        throw new ProviderError(`${what}: no answer within ${timeoutMs} ms`, { kind: "timeout", cause: err });
      }
      const reason = err instanceof Error ? describeNetworkError(err) : String(err);
      throw new ProviderError(`${what}: provider unreachable (${reason})`, {
        kind: "unavailable",
        cause: err,
        requestMayHaveLeft: !(err instanceof Error && neverConnected(err)),
      });
    }
  }

  function parse<T>(what: string, schema: z.ZodType<T>, answer: HttpAnswer): T {
    const parsed = schema.safeParse(answer.body);
    if (parsed.success) return parsed.data;
    // A 2xx we cannot read: the outcome is unknown, so it is as retryable as a reset.
    throw new ProviderError(`${what}: malformed answer (HTTP ${answer.status})`, {
      kind: "unavailable",
      status: answer.status,
      cause: parsed.error,
    });
  }

  return {
    async createCharge(input, idempotencyKey, callOpts) {
      const what = "POST /v1/charges";
      const headers: Record<string, string> = { "idempotency-key": idempotencyKey };
      if (callOpts?.fault) headers["x-provider-fault"] = callOpts.fault;
      const body: Record<string, unknown> = {
        amount: input.amount,
        currency: input.currency,
        payment_method: input.paymentMethod,
      };
      if (input.metadata !== undefined) body.metadata = input.metadata;
      const answer = await call("POST", "/v1/charges", { body, headers });
      if (answer.status === 200 || answer.status === 201) return fromWire(parse(what, WireCharge, answer));
      if (answer.status === 402) return fromWire(parse(what, DeclineBody, answer).charge);
      throw errorFromAnswer(what, answer);
    },

    async getCharge(id) {
      const path = `/v1/charges/${encodeURIComponent(id)}`;
      const answer = await call("GET", path);
      if (answer.status === 200) return fromWire(parse(`GET ${path}`, WireCharge, answer));
      if (answer.status === 404) return null;
      throw errorFromAnswer(`GET ${path}`, answer);
    },

    async *listCharges(listOpts) {
      for await (const charge of walk("/v1/charges", ChargeList, listQuery(listOpts))) yield fromWire(charge);
    },

    async createRefund(input, idempotencyKey, callOpts) {
      const what = "POST /v1/refunds";
      const headers: Record<string, string> = { "idempotency-key": idempotencyKey };
      if (callOpts?.fault) headers["x-provider-fault"] = callOpts.fault;
      const body: Record<string, unknown> = { charge: input.charge, amount: input.amount };
      if (input.metadata !== undefined) body.metadata = input.metadata;
      const answer = await call("POST", "/v1/refunds", { body, headers });
      if (answer.status === 200 || answer.status === 201)
        return refundFromWire(parse(what, WireRefund, answer));
      throw errorFromAnswer(what, answer);
    },

    async *listRefunds(listOpts) {
      const query = listQuery(listOpts);
      if (listOpts?.charge) query.set("charge", listOpts.charge);
      for await (const refund of walk("/v1/refunds", RefundList, query)) yield refundFromWire(refund);
    },
  };

  /** Every page of a list, oldest first: the last id of a page is the next one's `starting_after`. */
  async function* walk<T extends { id: string }>(
    resource: string,
    schema: z.ZodType<{ data: T[]; has_more: boolean }>,
    filters: URLSearchParams,
  ): AsyncIterable<T> {
    let startingAfter: string | undefined;
    for (;;) {
      const query = new URLSearchParams(filters);
      query.set("limit", String(pageSize));
      if (startingAfter !== undefined) query.set("starting_after", startingAfter);
      const path = `${resource}?${query}`;
      const answer = await call("GET", path);
      if (answer.status !== 200) throw errorFromAnswer(`GET ${path}`, answer);
      const page = parse(`GET ${path}`, schema, answer);
      yield* page.data;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      startingAfter = last.id;
    }
  }
}

/** The filters charges and refunds share. */
function listQuery(
  opts: { createdGte?: Date; idempotencyKey?: string; metadata?: Record<string, string> } = {},
) {
  const query = new URLSearchParams();
  if (opts.createdGte) query.set("created_gte", opts.createdGte.toISOString());
  if (opts.idempotencyKey) query.set("idempotency_key", opts.idempotencyKey);
  for (const [name, value] of Object.entries(opts.metadata ?? {})) query.set(`metadata[${name}]`, value);
  return query;
}

function errorFromAnswer(what: string, answer: HttpAnswer): ProviderError {
  const parsed = ErrorBody.safeParse(answer.body);
  const message = parsed.success ? parsed.data.error.message : "no error details";
  const code = parsed.success ? parsed.data.error.code : undefined;
  const retryAfterMs = parseRetryAfter(answer.headers.get("retry-after"));
  const status = answer.status;
  const kind: ProviderErrorKind =
    status === 409
      ? "conflict"
      : status >= 500 || status === 429 || status === 408
        ? "unavailable"
        : "rejected";
  return new ProviderError(`${what}: HTTP ${status}: ${message}`, { kind, status, code, retryAfterMs });
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

class TimeoutError extends Error {
  override name = "TimeoutError";
}

// node:http with kept-alive connections rather than fetch: a payment makes one provider call,
// and fetch's streams and signals cost more CPU than the call's own work (lab/bench/history.md).
// An idle connection is closed after 4 s, before a server's usual 5 s keep-alive timeout can
// close it under a request that was just sent.
const keepAlive = { keepAlive: true, timeout: 4000 };
const agents = { "http:": new http.Agent(keepAlive), "https:": new https.Agent(keepAlive) };

/** One request; the timeout covers the whole exchange, the answer's body included. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const transport = target.protocol === "https:" ? https : http;
    const req = transport.request(target, { method, headers, agent: agents[target.protocol as "http:"] });
    const timer = setTimeout(
      () => req.destroy(new TimeoutError(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    req.on("error", fail);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", fail);
      res.on("end", () => {
        clearTimeout(timer);
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: answerHeaders,
          text: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    req.end(body);
  });
}

/** Errors that happen before a connection exists, so before any byte of a request is written. */
const NEVER_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL"]);

function neverConnected(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && NEVER_CONNECTED.has(code);
}

function describeNetworkError(err: Error): string {
  const own = (err as NodeJS.ErrnoException).code;
  if (own) return `${own}: ${err.message}`;
  const cause = err.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ? `${code}: ${cause.message}` : cause.message;
  }
  return err.message;
}
