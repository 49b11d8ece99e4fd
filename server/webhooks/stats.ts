import { z } from "zod";
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

export const ZEndpointBacklog = z.object({
  endpointId: z.string(),
  accountId: z.string(),
  url: z.string(),
  disabledReason: z.string().nullable(),
  pending: z.number().int(),
  failed: z.number().int(),
  /** How long its most overdue pending message has been due (0 when none is due yet). */
  lagSeconds: z.number().int(),
});
export type EndpointBacklog = z.infer<typeof ZEndpointBacklog>;

/** For the admin: endpoints with a backlog, failed messages, or disabled, worst first. */
export async function endpointBacklogs(prisma: Db, limit = 50): Promise<EndpointBacklog[]> {
  const rows = await prisma.$queryRaw<
    {
      id: string;
      account_id: string;
      url: string;
      disabled_reason: string | null;
      pending: number;
      failed: number;
      lag: number | null;
    }[]
  >`
    SELECT e.id, e.account_id, e.url, e.disabled_reason,
           count(*) FILTER (WHERE m.status = 'pending')::int AS pending,
           count(*) FILTER (WHERE m.status = 'failed')::int AS failed,
           extract(epoch FROM now() - min(m.next_attempt_at) FILTER (
             WHERE m.status = 'pending' AND m.next_attempt_at <= now()))::float8 AS lag
      FROM webhook_endpoints e
      LEFT JOIN webhook_messages m ON m.endpoint_id = e.id AND m.status <> 'succeeded'
     WHERE e.deleted_at IS NULL
     GROUP BY e.id
    HAVING e.disabled_at IS NOT NULL OR count(m.id) > 0
     ORDER BY (e.disabled_at IS NOT NULL) DESC, count(*) FILTER (WHERE m.status = 'pending') DESC
     LIMIT ${limit}`;
  return rows.map((r) => ({
    endpointId: r.id,
    accountId: r.account_id,
    url: r.url,
    disabledReason: r.disabled_reason,
    pending: r.pending,
    failed: r.failed,
    lagSeconds: Math.max(0, Math.floor(r.lag ?? 0)),
  }));
}
