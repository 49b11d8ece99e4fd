/**
 * HTTP API of the fake payment provider (node:http only). See provider/README.md.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Pool } from "pg";
import { z } from "zod";
import { authorizedBy, providerAuth } from "./auth";
import { type FaultConfig, type FaultPlan, FaultSyntaxError, NO_FAULT_CONFIG, planFaults } from "./faults";
import {
  apiError,
  fingerprintOf,
  header,
  IdempotencyKey,
  idempotencyKeyInFlight,
  idempotencyKeyInUse,
  idempotencyKeyRequired,
  invalidBody,
  ListQuery,
  listReply,
  Metadata,
  methodNotAllowed,
  type Reply,
  readJson,
  safeDecode,
  send,
} from "./http";
import { refundRoutes } from "./refund-routes";
import {
  type ChargeRow,
  createChargeOnce,
  findCharge,
  listCharges,
  type NewCharge,
  type StoredResponse,
} from "./store";

export interface ProviderServerOptions {
  pool: Pool;
  /** Random / global faults (env PROVIDER_FAULTS); applied to POST /v1/charges and /v1/refunds only. */
  faults?: FaultConfig;
  /** /v1/* requires `Authorization: Bearer <secret>`; unset: any `sk_test_` key (./auth.ts). */
  secret?: string;
  /** Idempotency keys are forgotten after this, like a real provider's (default: kept forever). */
  keyRetentionSeconds?: number;
  /** How long `pm_card_slow` takes (default 2000 ms). */
  slowCardMs?: number;
  /** Called with unexpected errors (default: console.error). */
  onError?: (err: unknown) => void;
}

type Outcome = Pick<NewCharge, "status" | "failureCode" | "failureMessage"> & { delay: boolean };

const SUCCEEDED: Outcome = { status: "succeeded", failureCode: null, failureMessage: null, delay: false };
const PAYMENT_METHODS: ReadonlyMap<string, Outcome> = new Map([
  ["pm_card_visa", SUCCEEDED],
  ["pm_card_slow", { ...SUCCEEDED, delay: true }],
  [
    "pm_card_declined",
    {
      status: "declined",
      failureCode: "card_declined",
      failureMessage: "Your card was declined.",
      delay: false,
    },
  ],
]);

const CreateChargeBody = z.strictObject({
  amount: z.number().int().positive().max(99_999_999_999),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, "must be a 3-letter ISO 4217 code")
    .transform((c) => c.toLowerCase()),
  payment_method: z.string().min(1).max(255),
  metadata: Metadata.optional(),
});
type CreateChargeBody = z.infer<typeof CreateChargeBody>;

export function createProviderServer(options: ProviderServerOptions): Server {
  const faults = options.faults ?? NO_FAULT_CONFIG;
  const slowCardMs = options.slowCardMs ?? 2000;
  const onError = options.onError ?? ((err: unknown) => console.error("provider: internal error", err));
  const auth = providerAuth(options.secret);
  const refunds = refundRoutes(options);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://provider.invalid");
    const path = url.pathname.replace(/\/+$/, "") || "/";

    if (path === "/health") {
      send(res, req.method === "GET" ? { status: 200, body: { ok: true } } : methodNotAllowed("GET"));
      return;
    }
    if (!path.startsWith("/v1/")) {
      send(res, apiError(404, "invalid_request_error", `Unrecognized request URL (${req.method} ${path})`));
      return;
    }
    if (!authorizedBy(auth, req.headers.authorization)) {
      send(res, {
        ...apiError(
          401,
          "authentication_error",
          auth.kind === "secret"
            ? "Invalid or missing API key: send Authorization: Bearer <secret>"
            : "Invalid or missing API key: send Authorization: Bearer sk_test_…",
        ),
        headers: { "www-authenticate": "Bearer" },
      });
      return;
    }

    const isCreate = req.method === "POST" && (path === "/v1/charges" || path === "/v1/refunds");
    let plan: FaultPlan;
    try {
      plan = planFaults(header(req, "x-provider-fault"), isCreate ? faults : null);
    } catch (err) {
      if (!(err instanceof FaultSyntaxError)) throw err;
      send(res, apiError(400, "invalid_request_error", err.message));
      return;
    }

    let reply: Reply;
    if (plan.error !== null) {
      // Before doing anything: nothing is stored.
      reply = apiError(plan.error, "api_error", `Injected fault: error=${plan.error}`);
      if (plan.error === 503) reply.headers = { "retry-after": "1" };
    } else {
      reply = await route(req, path, url.searchParams);
    }

    if (plan.latencyMs > 0) await sleep(plan.latencyMs);
    if (plan.error === null && plan.drop) {
      // The work is committed; the client never learns the outcome.
      const socket = req.socket;
      if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
      else socket.destroy();
      return;
    }
    send(res, reply);
  }

  async function route(req: IncomingMessage, path: string, query: URLSearchParams): Promise<Reply> {
    if (path === "/v1/charges") {
      if (req.method === "POST") return createCharge(req);
      if (req.method === "GET") return list(query);
      return methodNotAllowed("GET, POST");
    }
    if (path === "/v1/refunds" || path.startsWith("/v1/refunds/")) return refunds.route(req, path, query);
    const match = /^\/v1\/charges\/([^/]+)$/.exec(path);
    if (match?.[1] !== undefined) {
      if (req.method !== "GET") return methodNotAllowed("GET");
      const id = safeDecode(match[1]);
      const charge = await findCharge(options.pool, id);
      return charge
        ? { status: 200, body: chargeToWire(charge) }
        : apiError(404, "invalid_request_error", `No such charge: '${id}'`, { code: "resource_missing" });
    }
    return apiError(404, "invalid_request_error", `Unrecognized request URL (${req.method} ${path})`);
  }

  async function createCharge(req: IncomingMessage): Promise<Reply> {
    const key = IdempotencyKey.safeParse(header(req, "idempotency-key"));
    if (!key.success) return idempotencyKeyRequired("POST /v1/charges");

    const raw = await readJson(req);
    if (!raw.ok) return raw.reply;
    const parsed = CreateChargeBody.safeParse(raw.value);
    if (!parsed.success) return invalidBody(parsed.error);
    const params = parsed.data;
    const outcome = PAYMENT_METHODS.get(params.payment_method);
    if (!outcome) {
      return apiError(
        400,
        "invalid_request_error",
        `Unknown payment method '${params.payment_method}' (use pm_card_visa, pm_card_declined or pm_card_slow)`,
        { code: "payment_method_unknown", param: "payment_method" },
      );
    }

    const result = await createChargeOnce(options.pool, {
      key: key.data,
      fingerprint: fingerprint(params),
      charge: {
        amount: params.amount,
        currency: params.currency,
        paymentMethod: params.payment_method,
        metadata: params.metadata ?? {},
        status: outcome.status,
        failureCode: outcome.failureCode,
        failureMessage: outcome.failureMessage,
      },
      holdMs: outcome.delay ? slowCardMs : 0,
      render: renderCreated,
      retentionSeconds: options.keyRetentionSeconds,
    });

    switch (result.kind) {
      case "created":
        return result.response;
      case "replayed":
        return {
          // A new charge answers 201, its replay 200; a decline is 402 both times.
          status: result.response.status === 201 ? 200 : result.response.status,
          body: result.response.body,
          headers: { "idempotent-replayed": "true" },
        };
      case "mismatch":
        return idempotencyKeyInUse(key.data);
      case "in_flight":
        return idempotencyKeyInFlight(key.data);
    }
  }

  function list(query: URLSearchParams): Promise<Reply> {
    return listReply(query, ListQuery, async (q, metadata) => {
      const page = await listCharges(options.pool, {
        limit: q.limit,
        startingAfter: q.starting_after,
        createdGte: q.created_gte,
        idempotencyKey: q.idempotency_key,
        metadata,
      });
      return { data: page.charges.map(chargeToWire), hasMore: page.hasMore };
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      onError(err);
      if (!res.headersSent && !res.destroyed)
        send(res, apiError(500, "api_error", "Internal provider error"));
      else res.destroy();
    });
  });
  // Longer than undici's default keep-alive so the client, not the server, closes idle sockets.
  server.keepAliveTimeout = 10_000;
  return server;
}

export function chargeToWire(charge: ChargeRow) {
  return {
    id: charge.id,
    object: "charge",
    amount: charge.amount,
    currency: charge.currency,
    payment_method: charge.paymentMethod,
    status: charge.status,
    failure_code: charge.failureCode,
    failure_message: charge.failureMessage,
    metadata: charge.metadata,
    idempotency_key: charge.idempotencyKey,
    created_at: charge.createdAt.toISOString(),
  };
}

function renderCreated(charge: ChargeRow): StoredResponse {
  const wire = chargeToWire(charge);
  if (charge.status === "succeeded") return { status: 201, body: wire };
  return {
    status: 402,
    body: {
      error: {
        type: "card_error",
        code: charge.failureCode,
        message: charge.failureMessage,
        charge: charge.id,
      },
      charge: wire,
    },
  };
}

/** Canonical fingerprint of the parameters: same key + same fingerprint = replay. */
function fingerprint(params: CreateChargeBody): string {
  return fingerprintOf([params.amount, params.currency, params.payment_method], params.metadata);
}
