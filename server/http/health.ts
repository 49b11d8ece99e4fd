import { type Db, db } from "../db";
import { isStopping } from "../lifecycle/stop-in-order";
import { errorField, logger } from "../log";

export interface Health {
  status: "ok" | "unavailable";
  database?: "up" | "down";
  /** The process was told to stop: a balancer should send it nothing new. */
  stopping?: true;
}

/** Liveness: the process answers. Nothing outside it is consulted, so a database outage never restarts it. */
export function checkLiveness(): Health {
  return { status: "ok" };
}

/**
 * Readiness: the process is not stopping, and the database answers a trivial query within two seconds. The cause of a failure is
 * logged, never answered: it can name hosts, users and ports.
 */
export async function checkReadiness(prisma: Db = db()): Promise<Health> {
  if (isStopping()) return { status: "unavailable", stopping: true };
  try {
    await Promise.race([
      prisma.$queryRaw`SELECT 1`,
      new Promise((_, reject) => setTimeout(() => reject(new Error("database timed out")), 2000).unref()),
    ]);
    return { status: "ok", database: "up" };
  } catch (error) {
    logger.warn({ check: "readiness", err: errorField(error) }, "database unavailable");
    return { status: "unavailable", database: "down" };
  }
}

export function healthResponse(health: Health): Response {
  return Response.json(health, {
    status: health.status === "ok" ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}
