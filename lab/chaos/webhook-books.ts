import pg from "pg";

/** A merchant's endpoint as our books hold it at the end. */
export interface BookedEndpoint {
  id: string;
  accountId: string;
  url: string;
  eventTypes: string[];
  createdAt: number;
  disabledAt: number | null;
  disabledReason: string | null;
  deletedAt: number | null;
}

/** One webhook message and how it stands at the end. */
export interface BookedMessage {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** pending | succeeded | failed */
  status: string;
  attempts: number;
  nextAttemptAt: number;
  /** The answers' statuses of its recorded attempts (null: no answer), in order. */
  answers: (number | null)[];
}

/** An outbox event of an account that has endpoints: what the fan-out must turn into messages. */
export interface BookedEvent {
  id: string;
  topic: string;
  accountId: string;
  createdAt: number;
}

export interface WebhookBooks {
  endpoints: BookedEndpoint[];
  messages: BookedMessage[];
  events: BookedEvent[];
}

export const NO_WEBHOOKS: WebhookBooks = { endpoints: [], messages: [], events: [] };

const ms = (d: Date | null) => d?.getTime() ?? null;

export async function readWebhookBooks(databaseUrl: string): Promise<WebhookBooks> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const endpoints = await client.query(`
      SELECT id::text, account_id::text AS "accountId", url, event_types AS "eventTypes",
             created_at AS "createdAt", disabled_at AS "disabledAt", disabled_reason AS "disabledReason",
             deleted_at AS "deletedAt"
        FROM webhook_endpoints`);
    const messages = await client.query(`
      SELECT m.id, m.endpoint_id::text AS "endpointId", m.event_id AS "eventId", m.event_type AS "eventType",
             m.status, m.attempts, m.next_attempt_at AS "nextAttemptAt",
             ARRAY(SELECT a.http_status FROM webhook_attempts a WHERE a.message_id = m.id
                    ORDER BY a.attempt_number) AS answers
        FROM webhook_messages m`);
    const events = await client.query(`
      SELECT o.id, o.topic, o.payload->>'accountId' AS "accountId", o.created_at AS "createdAt"
        FROM outbox_messages o
       WHERE o.payload->>'accountId' IN (SELECT account_id::text FROM webhook_endpoints)`);
    return {
      endpoints: endpoints.rows.map((e) => ({
        ...e,
        createdAt: e.createdAt.getTime(),
        disabledAt: ms(e.disabledAt),
        deletedAt: ms(e.deletedAt),
      })),
      messages: messages.rows.map((m) => ({ ...m, nextAttemptAt: m.nextAttemptAt.getTime() })),
      events: events.rows.map((e) => ({ ...e, createdAt: e.createdAt.getTime() })),
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * What the deliveries still owe: events of an enabled endpoint's account not yet turned into its
 * messages, and its messages still pending. The settle waits for none (or its time).
 */
export async function countWebhooksOwed(databaseUrl: string): Promise<number> {
  const client = new pg.Client(databaseUrl);
  try {
    await client.connect();
    const { rows } = await client.query<{ n: string }>(`
      WITH live AS (SELECT * FROM webhook_endpoints WHERE disabled_at IS NULL AND deleted_at IS NULL)
      SELECT (SELECT count(*) FROM webhook_messages m JOIN live e ON e.id = m.endpoint_id
               WHERE m.status = 'pending')
           + (SELECT count(*) FROM outbox_messages o JOIN live e ON o.payload->>'accountId' = e.account_id::text
               WHERE o.created_at >= e.created_at
                 AND NOT EXISTS (SELECT 1 FROM webhook_messages m
                                  WHERE m.event_id = o.id AND m.endpoint_id = e.id)) AS n`);
    return Number(rows[0]?.n ?? 0);
  } catch {
    return -1;
  } finally {
    await client.end().catch(() => {});
  }
}
