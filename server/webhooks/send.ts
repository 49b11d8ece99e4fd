import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { type AddressPolicy, type ResolvedAddress, resolveAllowed, urlRefusal } from "./address-guard";

export interface SendResult {
  /** The HTTP status, or null when no answer came (refused address, connection, timeout). */
  status: number | null;
  retryAfter: string | null;
  /** The answer's first bytes, or why there was none. */
  excerpt: string;
  latencyMs: number;
}

export const EXCERPT_CHARS = 500;
/** More of an answer than this is not read: a receiver cannot make us buffer its stream. */
const MAX_READ_BYTES = 16 * 1024;

/** Resolves every lookup of the request to the address that was checked: no second resolution. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (typeof options === "object" && options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}

/**
 * POSTs one attempt: the URL resolved and checked now, the connection made to that very address
 * (the TLS name stays the URL's host), no redirect followed, the whole exchange bounded by
 * `timeoutMs`.
 */
export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  opts: {
    policy: AddressPolicy;
    timeoutMs: number;
    /** Trust anchors instead of Node's bundled ones (a test's own CA); unset in the app. */
    ca?: string;
  },
): Promise<SendResult> {
  const started = performance.now();
  const done = (r: Omit<SendResult, "latencyMs">): SendResult => ({
    ...r,
    latencyMs: Math.round(performance.now() - started),
  });
  const parsed = urlRefusal(rawUrl, opts.policy);
  if (!parsed.ok) return done({ status: null, retryAfter: null, excerpt: `refused: URL ${parsed.reason}` });
  const target = await resolveAllowed(parsed.url, opts.policy);
  if (!target.ok) return done({ status: null, retryAfter: null, excerpt: `refused: ${target.reason}` });
  const url = parsed.url;
  const client = url.protocol === "https:" ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    const req = client.request(
      url,
      {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": "idempotent-checkout-webhooks/1",
        },
        lookup: pinnedLookup(target.address),
        ...(opts.ca ? { ca: opts.ca } : {}),
        // A keep-alive pool would reuse a socket opened to an address checked earlier.
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const status = res.statusCode ?? null;
        const retryAfter = typeof res.headers["retry-after"] === "string" ? res.headers["retry-after"] : null;
        const end = () => {
          const text = Buffer.concat(chunks).toString("utf8").slice(0, EXCERPT_CHARS);
          const redirect = status !== null && status >= 300 && status < 400;
          finish({
            status,
            retryAfter,
            excerpt: redirect
              ? `redirect not followed (${res.headers.location ?? "no location"}) ${text}`
              : text,
          });
        };
        res.on("data", (chunk: Buffer) => {
          if (read < MAX_READ_BYTES) chunks.push(chunk);
          read += chunk.length;
          if (read >= MAX_READ_BYTES) {
            end();
            res.destroy();
          }
        });
        res.on("end", end);
        res.on("error", end);
        res.on("close", end);
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, retryAfter: null, excerpt: `timed out after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    req.on("error", (error: NodeJS.ErrnoException) =>
      finish({ status: null, retryAfter: null, excerpt: `${error.code ?? "error"}: ${error.message}` }),
    );
    req.end(body);
  });
}
