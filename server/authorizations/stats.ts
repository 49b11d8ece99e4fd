import type { Db } from "../db";

/** For /api/metrics: captures and cancels by outcome, and the open authorizations (holds). */
export async function authorizationStats(prisma: Db) {
  const [actions, open] = await Promise.all([
    prisma.authorizationAction.groupBy({ by: ["kind", "status", "reason"], _count: { _all: true } }),
    prisma.$queryRaw<{ open: bigint; expiring: bigint }[]>`
      SELECT count(*)::bigint AS open,
             count(*) FILTER (WHERE capture_before <= now() + interval '1 day')::bigint AS expiring
        FROM payments WHERE capture_before IS NOT NULL`,
  ]);
  return {
    actions: actions.map((a) => ({ kind: a.kind, status: a.status, reason: a.reason, count: a._count._all })),
    authorized: Number(open[0]?.open ?? 0),
    expiringWithinDay: Number(open[0]?.expiring ?? 0),
  };
}
