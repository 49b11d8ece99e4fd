/**
 * `POST /v1/refunds`, `GET /v1/refunds` and `GET /v1/refunds/:id` (see README.md).
 */
import type { IncomingMessage } from "node:http";
import type { Pool } from "pg";
import { z } from "zod";
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
} from "./http";
import { createRefundOnce, findRefund, listRefunds, type RefundRow } from "./refund-store";

const CreateRefundBody = z.strictObject({
  charge: z.string().min(1).max(255),
  amount: z.number().int().positive().max(99_999_999_999),
  metadata: Metadata.optional(),
});

const RefundListQuery = ListQuery.extend({ charge: z.string().min(1).optional() });

export function refundToWire(refund: RefundRow) {
  return {
    id: refund.id,
    object: "refund",
    charge: refund.charge,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status,
    metadata: refund.metadata,
    idempotency_key: refund.idempotencyKey,
    created_at: refund.createdAt.toISOString(),
  };
}

export function refundRoutes(options: { pool: Pool; keyRetentionSeconds?: number }) {
  async function create(req: IncomingMessage): Promise<Reply> {
    const key = IdempotencyKey.safeParse(header(req, "idempotency-key"));
    if (!key.success) return idempotencyKeyRequired("POST /v1/refunds");
    const raw = await readJson(req);
    if (!raw.ok) return raw.reply;
    const parsed = CreateRefundBody.safeParse(raw.value);
    if (!parsed.success) return invalidBody(parsed.error);
    const params = parsed.data;

    const result = await createRefundOnce(options.pool, {
      key: key.data,
      fingerprint: fingerprintOf([params.charge, params.amount], params.metadata),
      charge: params.charge,
      amount: params.amount,
      metadata: params.metadata ?? {},
      retentionSeconds: options.keyRetentionSeconds,
    });
    switch (result.kind) {
      case "created":
        return { status: 200, body: refundToWire(result.refund) };
      case "replayed":
        return { status: 200, body: refundToWire(result.refund), headers: { "idempotent-replayed": "true" } };
      case "mismatch":
        return idempotencyKeyInUse(key.data);
      case "in_flight":
        return idempotencyKeyInFlight(key.data);
      case "charge_missing":
        return apiError(404, "invalid_request_error", `No such charge: '${params.charge}'`, {
          code: "resource_missing",
          param: "charge",
        });
      case "charge_not_refundable":
        return apiError(
          400,
          "invalid_request_error",
          `Charge ${params.charge} is ${result.chargeStatus}: only a succeeded charge can be refunded.`,
          { code: "charge_not_refundable", param: "charge" },
        );
      case "amount_too_large":
        return apiError(
          400,
          "invalid_request_error",
          `Refund amount (${params.amount}) is greater than the charge's unrefunded amount (${result.refundable}).`,
          { code: "amount_too_large", param: "amount" },
        );
    }
  }

  function list(query: URLSearchParams): Promise<Reply> {
    return listReply(query, RefundListQuery, async (q, metadata) => {
      const page = await listRefunds(options.pool, {
        limit: q.limit,
        startingAfter: q.starting_after,
        createdGte: q.created_gte,
        charge: q.charge,
        idempotencyKey: q.idempotency_key,
        metadata,
      });
      return { data: page.refunds.map(refundToWire), hasMore: page.hasMore };
    });
  }

  return {
    async route(req: IncomingMessage, path: string, query: URLSearchParams): Promise<Reply> {
      if (path === "/v1/refunds") {
        if (req.method === "POST") return create(req);
        if (req.method === "GET") return list(query);
        return methodNotAllowed("GET, POST");
      }
      const match = /^\/v1\/refunds\/([^/]+)$/.exec(path);
      if (match?.[1] === undefined)
        return apiError(404, "invalid_request_error", `Unrecognized request URL (${req.method} ${path})`);
      if (req.method !== "GET") return methodNotAllowed("GET");
      const id = safeDecode(match[1]);
      const refund = await findRefund(options.pool, id);
      return refund
        ? { status: 200, body: refundToWire(refund) }
        : apiError(404, "invalid_request_error", `No such refund: '${id}'`, { code: "resource_missing" });
    },
  };
}
