/**
 * The simulator's HTTP API: Stripe's v1 routes a checkout uses (node:http only). See README.md.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Pool } from "pg";
import { authorizedBy, bearer, providerAuth } from "./auth";
import { messagePage } from "./challenge-page";
import { type EventRecorder, type EventRequest, listEvents } from "./events";
import { type FaultConfig, type FaultPlan, FaultSyntaxError, NO_FAULT_CONFIG, planFaults } from "./faults";
import { type FormObject, parseForm } from "./form";
import {
  header,
  methodNotAllowed,
  notFound,
  originOf,
  paramReply,
  type Reply,
  readForm,
  safeDecode,
  send,
  stripeError,
  unrecognizedUrl,
} from "./http";
import { runIdempotent } from "./idempotency";
import { STRIPE_AUTHORIZATION_TTL_SECONDS } from "./intent-store";
import { createdFilter, listPage, listReply, pageParams } from "./lists";
import { API_VERSION } from "./objects";
import { Params } from "./params";
import {
  cancelIntent,
  captureIntent,
  confirmIntent,
  createIntent,
  type IntentContext,
  readCancel,
  readCapture,
  readConfirm,
  readCreate,
} from "./payment-intents";
import { SCHEMA } from "./pg";
import { createRefund, findRefund, listRefunds, readRefund } from "./refunds";
import { searchIntents } from "./search";
import { CHALLENGE_PATH, challengeRequest, html } from "./three-d-secure";
import { parseWebhookFaults } from "./webhooks";

export interface ProviderServerOptions {
  pool: Pool;
  /** Random / global faults (env PROVIDER_FAULTS); applied to every POST under /v1. */
  faults?: FaultConfig;
  /** /v1/* requires `Authorization: Bearer <secret>`; unset: any `sk_test_` key (./auth.ts). */
  secret?: string;
  /** Idempotency keys are forgotten after this, like Stripe's after 24 h (default: kept forever). */
  keyRetentionSeconds?: number;
  /** How long `pm_card_slow` takes (default 2000 ms). */
  slowCardMs?: number;
  /** Webhook endpoints: how many each event waits for, and the nudge after a commit that wrote events. */
  webhooks?: { endpoints: number; notify(): void };
  /**
   * The origin customers' browsers reach this process at, for 3-D Secure pages (PROVIDER_PUBLIC_URL);
   * default: the origin each API request was addressed to (its Host header).
   */
  publicUrl?: string;
  /** An authorization's capture_before after its charge (default Stripe's 7 days). */
  authorizationTtlSeconds?: number;
  /** The merchant a challenge page names (default "Idempotent Checkout"). */
  merchantName?: string;
  /** Called with unexpected errors (default: console.error). */
  onError?: (err: unknown) => void;
}

/** What a route gets of its request. */
interface Call {
  req: IncomingMessage;
  method: string;
  path: string;
  query: URLSearchParams;
  key: string | undefined;
  request: EventRequest;
}

const INTENT_ACTION = /^\/v1\/payment_intents\/([^/]+)\/(confirm|capture|cancel)$/;
const INTENT = /^\/v1\/payment_intents\/([^/]+)$/;
const REFUND = /^\/v1\/refunds\/([^/]+)$/;
const EVENT = /^\/v1\/events\/([^/]+)$/;

export function createProviderServer(options: ProviderServerOptions): Server {
  const { pool } = options;
  const faults = options.faults ?? NO_FAULT_CONFIG;
  const slowCardMs = options.slowCardMs ?? 2000;
  const authorizationTtlSeconds = options.authorizationTtlSeconds ?? STRIPE_AUTHORIZATION_TTL_SECONDS;
  const onError = options.onError ?? ((err: unknown) => console.error("provider: internal error", err));
  const auth = providerAuth(options.secret);
  const recorder: EventRecorder = { endpoints: options.webhooks?.endpoints ?? 0 };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://provider.invalid");
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const requestId = `req_${randomBytes(7).toString("hex")}`;
    const common: Record<string, string> = {
      "request-id": requestId,
      "stripe-version": header(req, "stripe-version") ?? API_VERSION,
    };
    const key = header(req, "idempotency-key");
    if (key !== undefined) common["idempotency-key"] = key;

    if (path === "/health") {
      send(res, req.method === "GET" ? { status: 200, body: { ok: true } } : methodNotAllowed("GET"));
      return;
    }
    // A 3-D Secure page is the customer's, like hooks.stripe.com: no API key, its token suffices.
    const challenge = CHALLENGE_PATH.exec(path)?.[1];
    if (!challenge && !path.startsWith("/v1/")) {
      send(res, unrecognizedUrl(req.method, path), common);
      return;
    }
    const denied = challenge ? null : authenticate(req.headers.authorization);
    if (denied) {
      send(res, denied, common);
      return;
    }

    const method = req.method ?? "GET";
    let plan: FaultPlan;
    try {
      plan = planFaults(header(req, "x-provider-fault"), method === "POST" ? faults : null);
    } catch (err) {
      if (!(err instanceof FaultSyntaxError)) throw err;
      send(res, stripeError(400, "invalid_request_error", err.message), common);
      return;
    }

    const webhookFault = header(req, "x-provider-webhook-fault") || null;
    if (webhookFault) {
      try {
        parseWebhookFaults(webhookFault, "X-Provider-Webhook-Fault");
      } catch (err) {
        if (!(err instanceof FaultSyntaxError)) throw err;
        send(res, stripeError(400, "invalid_request_error", err.message), common);
        return;
      }
    }

    let reply: Reply;
    if (plan.error !== null) {
      // Before doing anything: nothing is stored, and the same request may be sent again.
      reply = challenge
        ? html(plan.error, messagePage("Authentication unavailable", `Injected fault: error=${plan.error}`))
        : stripeError(plan.error, "api_error", `Injected fault: error=${plan.error}`);
      if (plan.error === 503) reply.headers = { "retry-after": "1" };
    } else if (challenge) {
      // Its events are the customer's doing, not an API request's: Stripe's carry no request id.
      reply = await challengeRoute(req, challenge, { id: null, idempotencyKey: null, webhookFault });
    } else {
      const call = {
        req,
        method,
        path,
        query: url.searchParams,
        key,
        request: { id: requestId, idempotencyKey: key ?? null, webhookFault },
      };
      reply = await route(call);
    }

    if (plan.latencyMs > 0) await sleep(plan.latencyMs);
    if (plan.error === null && plan.drop) {
      // The work is committed; the client never learns the outcome.
      const socket = req.socket;
      if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
      else socket.destroy();
      return;
    }
    send(res, reply, common);
  }

  async function challengeRoute(req: IncomingMessage, token: string, request: EventRequest): Promise<Reply> {
    const merchant = options.merchantName ?? "Idempotent Checkout";
    const ctx = { pool, merchant, authorizationTtlSeconds, request, recorder };
    const answered = await challengeRequest(ctx, req, token);
    if (answered.changed && options.webhooks) options.webhooks.notify();
    return answered.reply;
  }

  function authenticate(authorization: string | undefined): Reply | null {
    if (authorizedBy(auth, authorization)) return null;
    const key = bearer(authorization);
    const message =
      key === undefined
        ? "You did not provide an API key. You need to provide your API key in the Authorization header, " +
          "using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."
        : `Invalid API Key provided: ${key.slice(0, 8)}${"*".repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`;
    return {
      ...stripeError(401, "invalid_request_error", message),
      headers: { "www-authenticate": 'Bearer realm="Stripe"' },
    };
  }

  async function route(call: Call): Promise<Reply> {
    try {
      return await dispatch(call);
    } catch (err) {
      const reply = paramReply(err);
      if (reply) return reply;
      throw err;
    }
  }

  async function dispatch(call: Call): Promise<Reply> {
    const { method, path } = call;
    if (path === "/v1/payment_intents") {
      if (method === "POST") return post(call, readCreate, (ctx, input) => createIntent(ctx, input));
      if (method === "GET") return list(call, "payment_intents", "payment_intent", listIntentParams);
      return methodNotAllowed("GET, POST");
    }
    if (path === "/v1/payment_intents/search") {
      if (method !== "GET") return methodNotAllowed("GET");
      return searchIntents(pool, queryParams(call));
    }
    const action = INTENT_ACTION.exec(path);
    if (action?.[1] && action[2]) {
      if (method !== "POST") return methodNotAllowed("POST");
      const id = safeDecode(action[1]);
      if (action[2] === "confirm")
        return post(call, readConfirm, (ctx, input) => confirmIntent(ctx, id, input));
      if (action[2] === "capture")
        return post(call, readCapture, (ctx, input) => captureIntent(ctx, id, input));
      return post(call, readCancel, (ctx, input) => cancelIntent(ctx, id, input));
    }
    const intent = INTENT.exec(path);
    if (intent?.[1]) {
      if (method !== "GET") return methodNotAllowed("GET");
      queryParams(call).only();
      return retrieve("payment_intents", "payment_intent", safeDecode(intent[1]));
    }
    if (path === "/v1/refunds") {
      if (method === "POST") return post(call, readRefund, (ctx, input) => createRefund(ctx, input));
      if (method === "GET") return listReply("/v1/refunds", await listRefunds(pool, queryParams(call)));
      return methodNotAllowed("GET, POST");
    }
    const refund = REFUND.exec(path);
    if (refund?.[1]) {
      if (method !== "GET") return methodNotAllowed("GET");
      queryParams(call).only();
      return findRefund(pool, safeDecode(refund[1]));
    }
    if (path === "/v1/events") {
      if (method !== "GET") return methodNotAllowed("GET");
      return listReply("/v1/events", await listEvents(pool, queryParams(call)));
    }
    const event = EVENT.exec(path);
    if (event?.[1]) {
      if (method !== "GET") return methodNotAllowed("GET");
      queryParams(call).only();
      return retrieve("events", "event", safeDecode(event[1]));
    }
    return unrecognizedUrl(method, path);
  }

  /**
   * A POST: its form read and checked (a refusal stores nothing), then its work once per
   * Idempotency-Key, in one transaction with the key's stored answer.
   */
  async function post<T>(
    call: Call,
    read: (params: Params) => T,
    work: (ctx: IntentContext, input: T) => Promise<Reply>,
  ): Promise<Reply> {
    const body = await readForm(call.req);
    if (!body.ok) return body.reply;
    const input = read(new Params(body.form));
    let ran = false;
    const outcome = await runIdempotent(
      pool,
      {
        key: call.key,
        method: call.method,
        path: call.path,
        params: body.form,
        retentionSeconds: options.keyRetentionSeconds,
      },
      async (client) => {
        ran = true;
        const publicUrl = options.publicUrl ?? originOf(call.req);
        return {
          reply: await work(
            { client, publicUrl, request: call.request, recorder, slowCardMs, authorizationTtlSeconds },
            input,
          ),
        };
      },
    );
    if (ran && options.webhooks) options.webhooks.notify();
    return outcome.reply;
  }

  function queryParams(call: Call): Params {
    return new Params(parseForm(call.query) as FormObject);
  }

  async function list(
    call: Call,
    table: "payment_intents",
    noun: string,
    read: (params: Params, values: unknown[]) => string[],
  ): Promise<Reply> {
    const params = queryParams(call);
    const values: unknown[] = [];
    const where = read(params, values);
    const page = await listPage(pool, { table, noun, where, values }, pageParams(params));
    return listReply(`/v1/${table}`, page);
  }

  async function retrieve(table: "payment_intents" | "events", noun: string, id: string): Promise<Reply> {
    const found = await pool.query<{ object: unknown }>(
      `SELECT object FROM ${SCHEMA}.${table} WHERE id = $1`,
      [id],
    );
    const row = found.rows[0];
    return row ? { status: 200, body: row.object } : notFound(noun, id, "id");
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      onError(err);
      if (!res.headersSent && !res.destroyed)
        send(res, stripeError(500, "api_error", "Internal provider error"));
      else res.destroy();
    });
  });
  // Longer than the clients' idle keep-alive so the client, not the server, closes idle sockets.
  server.keepAliveTimeout = 10_000;
  return server;
}

/** `GET /v1/payment_intents`: `created` and the list's cursors (Stripe's `customer` filter has no customers here). */
function listIntentParams(params: Params, values: unknown[]): string[] {
  params.only("limit", "starting_after", "ending_before", "created");
  const created = createdFilter(params, values);
  return created ? [created] : [];
}
