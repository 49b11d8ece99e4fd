/**
 * What the simulator's routes share: replies, Stripe's error object, and reading a request's
 * form-encoded body or query.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type FormObject, FormSyntaxError, parseForm } from "./form";
import { isParamError } from "./params";

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A page for a browser (the 3-D Secure challenge) instead of JSON. */
  html?: string;
}

/** A page's headers: never cached, its token-bearing address never sent on as a Referer. */
const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
};

const MAX_BODY_BYTES = 64 * 1024;

export type ErrorType = "api_error" | "card_error" | "idempotency_error" | "invalid_request_error";

export interface StripeErrorFields {
  code?: string;
  param?: string;
  decline_code?: string;
  charge?: string;
  payment_intent?: unknown;
  payment_method?: unknown;
}

/** Stripe's error object: `{ error: { type, message, code?, param?, decline_code?, doc_url?, … } }`. */
export function stripeError(
  status: number,
  type: ErrorType,
  message: string,
  fields: StripeErrorFields = {},
): Reply {
  const error: Record<string, unknown> = { type, message };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) error[name] = value;
  if (fields.code) error.doc_url = `https://stripe.com/docs/error-codes/${fields.code.replaceAll("_", "-")}`;
  return { status, body: { error } };
}

export function notFound(what: string, id: string, param?: string): Reply {
  return stripeError(404, "invalid_request_error", `No such ${what}: '${id}'`, {
    code: "resource_missing",
    param,
  });
}

export function unrecognizedUrl(method: string | undefined, path: string): Reply {
  return stripeError(
    404,
    "invalid_request_error",
    `Unrecognized request URL (${method} ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
  );
}

export function methodNotAllowed(allow: string): Reply {
  return {
    ...stripeError(405, "invalid_request_error", `Method not allowed (allowed: ${allow})`),
    headers: { allow },
  };
}

/** A refused parameter (ParamError) as Stripe answers it, or null for any other error. */
export function paramReply(error: unknown): Reply | null {
  if (isParamError(error))
    return stripeError(error.status, "invalid_request_error", error.message, {
      code: error.code,
      param: error.param,
    });
  if (error instanceof FormSyntaxError) return stripeError(400, "invalid_request_error", error.message);
  return null;
}

/**
 * Stripe-Should-Retry as Stripe sends it: `true` where the same request may succeed later and
 * cannot do harm (a key in use, an error before anything ran), `false` on a definite answer.
 */
export function shouldRetryHeader(status: number): string | undefined {
  if (status === 409 || status === 429 || status >= 500) return "true";
  if (status >= 400) return "false";
  return undefined;
}

export function send(res: ServerResponse, reply: Reply, common: Record<string, string> = {}): void {
  if (reply.html !== undefined) {
    res.writeHead(reply.status, {
      ...HTML_HEADERS,
      "content-length": Buffer.byteLength(reply.html),
      ...common,
      ...reply.headers,
    });
    res.end(reply.html);
    return;
  }
  const payload = JSON.stringify(reply.body);
  const retry = shouldRetryHeader(reply.status);
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
    ...common,
    ...(retry !== undefined && { "stripe-should-retry": retry }),
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

/** A POST's form-encoded body (an empty body is no parameters). */
export async function readForm(
  req: IncomingMessage,
): Promise<{ ok: true; form: FormObject; raw: string } | { ok: false; reply: Reply }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    // Keep draining an oversized body (so the answer can still be written), but drop it.
    if (size <= MAX_BODY_BYTES) chunks.push(buf);
  }
  if (size > MAX_BODY_BYTES)
    return {
      ok: false,
      reply: stripeError(413, "invalid_request_error", `Body larger than ${MAX_BODY_BYTES} bytes`),
    };
  const raw = Buffer.concat(chunks).toString("utf8");
  const type = header(req, "content-type") ?? "";
  if (raw.trim() !== "" && !type.startsWith("application/x-www-form-urlencoded")) {
    return {
      ok: false,
      reply: stripeError(
        400,
        "invalid_request_error",
        "Invalid request: the body must be application/x-www-form-urlencoded (Stripe's bracket syntax, e.g. metadata[order_id]=o_1).",
      ),
    };
  }
  try {
    return { ok: true, form: parseForm(new URLSearchParams(raw)), raw };
  } catch (err) {
    const reply = paramReply(err);
    if (!reply) throw err;
    return { ok: false, reply };
  }
}

/** The origin a request was addressed to (its Host header, when it is a host[:port]). */
export function originOf(req: IncomingMessage): string {
  const host = req.headers.host ?? "";
  const local = req.socket.localAddress ?? "127.0.0.1";
  const fallback = `${local.includes(":") ? `[${local}]` : local}:${req.socket.localPort}`;
  return `http://${/^[A-Za-z0-9.[\]:-]+$/.test(host) ? host : fallback}`;
}
