import { createHash, timingSafeEqual } from "node:crypto";
import { authenticate } from "../auth/authenticate";
import { clientAddress } from "../auth/client-address";
import type { Db } from "../db";
import { env } from "../env";
import { blockedFor, LIMIT_RULES } from "../limits";
import { type Metrics, metrics, refreshDatabaseGauges } from "../metrics";

function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The scraper's own Bearer METRICS_TOKEN, or the admin (its token or session). A wrong token
 * counts against the address like a wrong admin token (authenticate records it), and an address
 * refused for too many is refused with the right metrics token too (decision 0063).
 */
async function mayScrape(req: Request, prisma: Db): Promise<boolean> {
  const bearer = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
  if (bearer && env.METRICS_TOKEN && sameSecret(bearer, env.METRICS_TOKEN))
    return (await blockedFor(LIMIT_RULES.adminTokenFailuresByAddress, clientAddress(req.headers))) === null;
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
