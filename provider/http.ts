/**
 * What the provider's HTTP routes share: replies, errors, body and query parsing, and the answers
 * of its idempotency keys (the same for charges and refunds).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { isUnknownCursor } from "./pg";

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const MAX_BODY_BYTES = 64 * 1024;
const MAX_LIST_LIMIT = 100;
const DEFAULT_LIST_LIMIT = 10;

export const ListQuery = z.strictObject({
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
export function splitMetadataQuery(query: URLSearchParams) {
  const rest: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  for (const [name, value] of query) {
    const m = METADATA_PARAM.exec(name);
    if (m?.[1] !== undefined) metadata[m[1]] = value;
    else rest[name] = value;
  }
  return { rest, metadata: Object.keys(metadata).length > 0 ? metadata : undefined };
}

export const IdempotencyKey = z.string().min(1).max(255);

export function apiError(
  status: number,
  type: string,
  message: string,
  extra: { code?: string; param?: string } = {},
): Reply {
  return { status, body: { error: { type, message, ...extra } } };
}

export function methodNotAllowed(allow: string): Reply {
  return {
    ...apiError(405, "invalid_request_error", `Method not allowed (allowed: ${allow})`),
    headers: { allow },
  };
}

export function send(res: ServerResponse, reply: Reply): void {
  const payload = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    ...reply.headers,
  });
  res.end(payload);
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

export function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join(".") : root;
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

export async function readJson(
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

/** Metadata as charges and refunds take it: string → string, at most 50 keys. */
export const Metadata = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, "at most 50 keys");

/** The key's parameters in a canonical order (metadata sorted by name), hashed. */
export function fingerprintOf(values: unknown[], metadata: Record<string, string> | undefined): string {
  const pairs = Object.entries(metadata ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256(JSON.stringify([...values, pairs])).toString("hex");
}

export function idempotencyKeyRequired(route: string): Reply {
  return apiError(
    400,
    "invalid_request_error",
    `An Idempotency-Key header (1-255 characters) is required for ${route}`,
    { code: "idempotency_key_required" },
  );
}

export function idempotencyKeyInUse(key: string): Reply {
  return apiError(
    422,
    "idempotency_error",
    `Keys for idempotent requests can only be used with the same parameters they were first used with. ` +
      `Try using a key other than '${key}' if you meant to execute a different request.`,
    { code: "idempotency_key_in_use" },
  );
}

export function idempotencyKeyInFlight(key: string): Reply {
  return {
    ...apiError(
      409,
      "idempotency_error",
      `There is currently another in-progress request using this Idempotency-Key ('${key}'); retry later.`,
      { code: "idempotency_key_in_flight" },
    ),
    headers: { "retry-after": "1" },
  };
}

export function invalidBody(error: z.ZodError): Reply {
  return apiError(400, "invalid_request_error", `Invalid request: ${describeIssues(error, "body")}`, {
    code: "parameter_invalid",
  });
}

export function invalidQuery(error: z.ZodError): Reply {
  return apiError(400, "invalid_request_error", `Invalid query: ${describeIssues(error, "query")}`, {
    code: "parameter_invalid",
  });
}

/**
 * A list's answer: the query checked against `schema` (its `metadata[name]` pairs apart), one page
 * read, an unknown `starting_after` a 400.
 */
export async function listReply<Q extends z.ZodType, T>(
  query: URLSearchParams,
  schema: Q,
  read: (
    q: z.infer<Q>,
    metadata: Record<string, string> | undefined,
  ) => Promise<{ data: T[]; hasMore: boolean }>,
): Promise<Reply> {
  const { rest, metadata } = splitMetadataQuery(query);
  const parsed = schema.safeParse(rest);
  if (!parsed.success) return invalidQuery(parsed.error);
  try {
    const page = await read(parsed.data, metadata);
    return { status: 200, body: { object: "list", data: page.data, has_more: page.hasMore } };
  } catch (err) {
    if (isUnknownCursor(err)) {
      return apiError(400, "invalid_request_error", err.message, { param: "starting_after" });
    }
    throw err;
  }
}
