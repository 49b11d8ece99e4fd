// The security headers (docs/decisions/0027). Pages get a per-request nonce CSP from proxy.ts;
// every response gets the static ones from next.config.ts.

/** A strict CSP for a page: only scripts carrying this request's nonce (and what they load). */
export function pageCsp(nonce: string, dev: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // Inline style attributes are used for layout; they cannot carry a nonce.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** A document without any script (the API reference, decision 0230): its inline style only. */
export function scriptlessCsp(): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The API reference viewer (a route handler, not a page): its own scripts and these inline hashes. */
export function viewerCsp(inlineScriptHashes: string[]): string {
  return [
    "default-src 'self'",
    `script-src 'self' ${inlineScriptHashes.join(" ")}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Headers for every response, pages and API alike. */
export const STATIC_SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=()" },
];

/** What every API answer carries: the static headers, and a CSP for data never rendered or framed. */
export const API_SECURITY_HEADERS = [
  ...STATIC_SECURITY_HEADERS,
  { key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" },
];

/** Two years with subdomains: only sent in production, which is served over HTTPS. */
export const HSTS = "max-age=63072000; includeSubDomains";
