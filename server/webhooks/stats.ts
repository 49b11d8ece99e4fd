import type { Db } from "../db";

export interface WebhookStats {
  /** Attempts by outcome, since the start (summed across processes: read from the database). */
  attempts: { succeeded: number; failed: number };
  /** Messages waiting for an attempt, of enabled endpoints. */
  pending: number;
  /** How late the most overdue message of an enabled endpoint is (0 when none is due). */
  lagSeconds: number;
  disabledEndpoints: number;
}

/** For the metrics and the admin: delivery outcomes, the backlog and its lag. */
export async function webhookStats(prisma: Db): Promise<WebhookStats> {
  const [row] = await prisma.$queryRaw<
    { succeeded: number; failed: number; pending: number; lag: number | null; disabled: number }[]
  >`
    SELECT (SELECT count(*)::int FROM webhook_attempts WHERE outcome = 'succeeded') AS succeeded,
           (SELECT count(*)::int FROM webhook_attempts WHERE outcome = 'failed') AS failed,
           (SELECT count(*)::int FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
             WHERE m.status = 'pending' AND e.disabled_at IS NULL AND e.deleted_at IS NULL) AS pending,
           (SELECT extract(epoch FROM now() - min(m.next_attempt_at))::float8
              FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
             WHERE m.status = 'pending' AND m.next_attempt_at <= now()
               AND e.disabled_at IS NULL AND e.deleted_at IS NULL) AS lag,
           (SELECT count(*)::int FROM webhook_endpoints WHERE disabled_at IS NOT NULL AND deleted_at IS NULL) AS disabled`;
  return {
    attempts: { succeeded: row?.succeeded ?? 0, failed: row?.failed ?? 0 },
    pending: row?.pending ?? 0,
    lagSeconds: Math.max(0, row?.lag ?? 0),
    disabledEndpoints: row?.disabled ?? 0,
  };
}
