import { checkSecretFrom } from "../auth/admin-token";
import { looksLikeApiKey } from "../auth/api-key-format";
import { authenticate } from "../auth/authenticate";
import { clientAddress } from "../auth/client-address";
import type { Db } from "../db";
import { env } from "../env";
import { type Metrics, metrics, refreshDatabaseGauges } from "../metrics";

/**
 * The scraper's own Bearer METRICS_TOKEN, or the admin (its token or session). Either token is
 * counted against the address before it is compared, like a wrong admin token, and an address
 * refused for too many is refused with the right token too (decisions 0063, 0146). The scheme's
 * case does not matter (RFC 9110).
 */
async function mayScrape(req: Request, prisma: Db): Promise<boolean> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "")?.[1];
  if (bearer) {
    // A customer's API key never scrapes, and is no guess at either secret.
    if (looksLikeApiKey(bearer)) return false;
    const check = await checkSecretFrom(prisma, bearer, [env.METRICS_TOKEN, env.ADMIN_TOKEN], {
      address: clientAddress(req.headers),
      channel: "metrics",
    });
    return check.ok;
  }
  const principal = await authenticate(prisma, req.headers, { adminToken: env.ADMIN_TOKEN });
  return principal.isAdmin;
}

/** GET /api/metrics in the Prometheus text format; 401 without the metrics or admin token. */
export async function metricsResponse(req: Request, prisma: Db, m: Metrics = metrics): Promise<Response> {
  if (!(await mayScrape(req, prisma))) {
    return new Response("Metrics token or admin authentication required.\n", {
      status: 401,
      headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="metrics"' },
    });
  }
  await refreshDatabaseGauges(prisma, m);
  return new Response(await m.registry.metrics(), {
    headers: { "content-type": m.registry.contentType, "cache-control": "no-store" },
  });
}
