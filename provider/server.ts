/**
 * HTTP API of the fake payment provider (node:http only). See provider/README.md.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Pool } from "pg";
import { z } from "zod";
import { type FaultConfig, type FaultPlan, FaultSyntaxError, NO_FAULT_CONFIG, planFaults } from "./faults";
import {
  type ChargeRow,
  createChargeOnce,
  findCharge,
  listCharges,
  type NewCharge,
  type StoredResponse,
  UnknownCursorError,
} from "./store";

export interface ProviderServerOptions {
  pool: Pool;
  /** Random / global faults (env PROVIDER_FAULTS); applied to POST /v1/charges only. */
  faults?: FaultConfig;
  /** When set, /v1/* requires `Authorization: Bearer <secret>`. */
  secret?: string;
  /** Idempotency keys are forgotten after this, like a real provider's (default: kept forever). */
  keyRetentionSeconds?: number;
  /** How long `pm_card_slow` takes (default 2000 ms). */
  slowCardMs?: number;
  /** Called with unexpected errors (default: console.error). */
  onError?: (err: unknown) => void;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const MAX_BODY_BYTES = 64 * 1024;
const MAX_LIST_LIMIT = 100;
const DEFAULT_LIST_LIMIT = 10;

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
  metadata: z
    .record(z.string().min(1).max(40), z.string().max(500))
    .refine((m) => Object.keys(m).length <= 50, "at most 50 keys")
    .optional(),
});
type CreateChargeBody = z.infer<typeof CreateChargeBody>;

const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  starting_after: z.string().min(1).optional(),
  created_gte: z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .optional(),
  idempotency_key: z.string().min(1).optional(),
});

/** `metadata[name]=value` query parameters, as Stripe's search spells them. */
const METADATA_PARAM = /^metadata\[([A-Za-z0-9_]{1,40})\]$/;
function splitMetadataQuery(query: URLSearchParams) {
  const rest: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  for (const [name, value] of query) {
    const m = METADATA_PARAM.exec(name);
    if (m?.[1] !== undefined) metadata[m[1]] = value;
    else rest[name] = value;
  }
  return { rest, metadata: Object.keys(metadata).length > 0 ? metadata : undefined };
}

const IdempotencyKey = z.string().min(1).max(255);

export function createProviderServer(options: ProviderServerOptions): Server {
  const faults = options.faults ?? NO_FAULT_CONFIG;
  const slowCardMs = options.slowCardMs ?? 2000;
  const onError = options.onError ?? ((err: unknown) => console.error("provider: internal error", err));
  const secretDigest = options.secret ? sha256(options.secret) : null;

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
    if (secretDigest && !authorized(req.headers.authorization, secretDigest)) {
      send(res, {
        ...apiError(
          401,
          "authentication_error",
          "Invalid or missing API key: send Authorization: Bearer <secret>",
        ),
        headers: { "www-authenticate": "Bearer" },
      });
      return;
    }

    const isCreate = path === "/v1/charges" && req.method === "POST";
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
    if (!key.success) {
      return apiError(
        400,
        "invalid_request_error",
        "An Idempotency-Key header (1-255 characters) is required for POST /v1/charges",
        { code: "idempotency_key_required" },
      );
    }

    const raw = await readJson(req);
    if (!raw.ok) return raw.reply;
    const parsed = CreateChargeBody.safeParse(raw.value);
    if (!parsed.success) {
      return apiError(
        400,
        "invalid_request_error",
        `Invalid request: ${describeIssues(parsed.error, "body")}`,
        {
          code: "parameter_invalid",
        },
      );
    }
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
        return apiError(
          422,
          "idempotency_error",
          `Keys for idempotent requests can only be used with the same parameters they were first used with. ` +
            `Try using a key other than '${key.data}' if you meant to execute a different request.`,
          { code: "idempotency_key_in_use" },
        );
      case "in_flight":
        return {
          ...apiError(
            409,
            "idempotency_error",
            `There is currently another in-progress request using this Idempotency-Key ('${key.data}'); retry later.`,
            { code: "idempotency_key_in_flight" },
          ),
          headers: { "retry-after": "1" },
        };
    }
  }

  async function list(query: URLSearchParams): Promise<Reply> {
    const { rest, metadata } = splitMetadataQuery(query);
    const parsed = ListQuery.safeParse(rest);
    if (!parsed.success) {
      return apiError(
        400,
        "invalid_request_error",
        `Invalid query: ${describeIssues(parsed.error, "query")}`,
        {
          code: "parameter_invalid",
        },
      );
    }
    const q = parsed.data;
    try {
      const page = await listCharges(options.pool, {
        limit: q.limit,
        startingAfter: q.starting_after,
        createdGte: q.created_gte,
        idempotencyKey: q.idempotency_key,
        metadata,
      });
      return {
        status: 200,
        body: { object: "list", data: page.charges.map(chargeToWire), has_more: page.hasMore },
      };
    } catch (err) {
      if (err instanceof UnknownCursorError) {
        return apiError(400, "invalid_request_error", err.message, { param: "starting_after" });
      }
      throw err;
    }
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
  const metadata = Object.entries(params.metadata ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256(JSON.stringify([params.amount, params.currency, params.payment_method, metadata])).toString(
    "hex",
  );
}

function apiError(
  status: number,
  type: string,
  message: string,
  extra: { code?: string; param?: string } = {},
): Reply {
  return { status, body: { error: { type, message, ...extra } } };
}

function methodNotAllowed(allow: string): Reply {
  return {
    ...apiError(405, "invalid_request_error", `Method not allowed (allowed: ${allow})`),
    headers: { allow },
  };
}

function send(res: ServerResponse, reply: Reply): void {
  const payload = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    ...reply.headers,
  });
  res.end(payload);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function authorized(authorization: string | undefined, secretDigest: Buffer): boolean {
  const match = /^Bearer (.+)$/.exec(authorization ?? "");
  return match?.[1] !== undefined && timingSafeEqual(sha256(match[1]), secretDigest);
}

function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join(".") : root;
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

async function readJson(
  req: IncomingMessage,
): Promise<{ ok: true; value: unknown } | { ok: false; reply: Reply }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    // Keep draining an oversized body (so the answer can still be written), but drop it.
    if (size <= MAX_BODY_BYTES) chunks.push(buf);
  }
  if (size > MAX_BODY_BYTES) {
    return {
      ok: false,
      reply: apiError(413, "invalid_request_error", `Body larger than ${MAX_BODY_BYTES} bytes`),
    };
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "")
    return { ok: false, reply: apiError(400, "invalid_request_error", "Missing JSON body") };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reply: apiError(400, "invalid_request_error", "Body is not valid JSON") };
  }
}
