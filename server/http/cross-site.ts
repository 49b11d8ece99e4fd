/**
 * Refusals for requests a browser could be tricked into sending from another site
 * (docs/decisions/0027). Returns why a tRPC request is refused, or null to let it through.
 *
 * - Bodies must be JSON: form-encoded, multipart and text/plain are what a cross-site HTML form
 *   can post without a CORS preflight, and tRPC would otherwise accept FormData inputs.
 * - A mutation authenticated by cookies must carry an Origin naming this host. Bearer requests
 *   are not ambient credentials, so they are not checked.
 */
export function crossSiteRefusal(
  req: Request,
): { status: 403 | 415; code: "FORBIDDEN" | "UNSUPPORTED_MEDIA_TYPE"; message: string } | null {
  if (req.method !== "POST") return null;
  const type = req.headers.get("content-type");
  if (type !== null && !/^application\/json\s*(;|$)/i.test(type)) {
    return {
      status: 415,
      code: "UNSUPPORTED_MEDIA_TYPE",
      message: "Send request bodies as application/json.",
    };
  }
  if (req.headers.get("authorization") || !req.headers.get("cookie")) return null;
  if (!sameOrigin(req)) {
    return {
      status: 403,
      code: "FORBIDDEN",
      message: "Cross-site request refused: a cookie-authenticated call must come from this site.",
    };
  }
  return null;
}

/**
 * Scheme and host, as a browser's same-origin rule compares them: http://shop is not the site
 * https://shop. A proxy in front names the public ones (X-Forwarded-Proto/-Host); a browser cannot
 * set those headers on a cross-site request without a preflight.
 */
function sameOrigin(req: Request): boolean {
  const origin = req.headers.get("origin");
  if (!origin || origin === "null") return false;
  const url = new URL(req.url);
  const first = (name: string) => req.headers.get(name)?.split(",")[0]?.trim() || undefined;
  const host = first("x-forwarded-host") ?? first("host") ?? url.host;
  const scheme = first("x-forwarded-proto") ?? url.protocol.replace(/:$/, "");
  try {
    const from = new URL(origin);
    return from.host === host && from.protocol === `${scheme.toLowerCase()}:`;
  } catch {
    return false;
  }
}
