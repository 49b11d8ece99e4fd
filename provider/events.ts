/**
 * Events: every change of an object records one (Stripe's `payment_intent.succeeded`,
 * `charge.refunded`, …) in the transaction of the change, so an event exists exactly when its
 * change committed. `GET /v1/events` lists them; webhooks.ts delivers them.
 */
import type { Pool, PoolClient } from "pg";
import { createdFilter, type ListPage, listPage, pageParams } from "./lists";
import { API_VERSION } from "./objects";
import type { Params } from "./params";
import { ParamError } from "./params";
import { SCHEMA, timeOrderedId } from "./pg";

/** The request that caused an event, as Stripe's `event.request`. */
export interface EventRequest {
  id: string | null;
  idempotencyKey: string | null;
  /** The request's X-Provider-Webhook-Fault, kept with its events for their delivery. */
  webhookFault?: string | null;
}

export interface NewEvent {
  type: string;
  object: { id: string };
  previous?: Record<string, unknown>;
}

export interface EventRecorder {
  /** Whether an endpoint is configured: its events start with one pending webhook. */
  endpoints: number;
}

/** Inserts the events of one change, in the caller's transaction; returns their ids. */
export async function recordEvents(
  client: PoolClient,
  request: EventRequest,
  events: NewEvent[],
  recorder: EventRecorder,
): Promise<string[]> {
  if (events.length === 0) return [];
  const now = new Date();
  const created = Math.floor(now.getTime() / 1000);
  // One change's events keep their order in lists: each a millisecond after the one before.
  const rows = events.map((e, i) => {
    const id = timeOrderedId("evt");
    const data: Record<string, unknown> = { object: e.object };
    if (e.previous) data.previous_attributes = e.previous;
    return {
      id,
      at: new Date(now.getTime() + i).toISOString(),
      type: e.type,
      object_id: e.object.id,
      object: {
        id,
        object: "event",
        api_version: API_VERSION,
        created,
        data,
        livemode: false,
        pending_webhooks: recorder.endpoints,
        request: { id: request.id, idempotency_key: request.idempotencyKey },
        type: e.type,
      },
    };
  });
  await client.query(
    `INSERT INTO ${SCHEMA}.events (id, created, type, object_id, pending_webhooks, object, webhook_next_at, webhook_fault)
     SELECT e.id, e.at, e.type, e.object_id, $1, e.object, CASE WHEN $1 > 0 THEN e.at END, $3
       FROM jsonb_to_recordset($2::jsonb) AS e(id text, at timestamptz, type text, object_id text, object jsonb)`,
    [recorder.endpoints, JSON.stringify(rows), request.webhookFault ?? null],
  );
  return rows.map((r) => r.id);
}

/** `type=payment_intent.*` matches every type of that prefix, as Stripe's. */
function typePattern(type: string): string {
  return type.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_").replaceAll("*", "%");
}

/** `GET /v1/events`: `type` or `types[]`, `created`, `delivery_success`, and the list's cursors. */
export async function listEvents(pool: Pool, params: Params): Promise<ListPage> {
  params.only("limit", "starting_after", "ending_before", "created", "type", "types", "delivery_success");
  const page = pageParams(params);
  const type = params.string("type");
  const types = params.strings("types");
  if (type !== undefined && types !== undefined)
    throw new ParamError(
      "You may only specify one of these parameters: type, types.",
      "types",
      "parameters_exclusive",
    );
  const delivered = params.boolean("delivery_success");
  const where: string[] = [];
  const values: unknown[] = [];
  const created = createdFilter(params, values);
  if (created) where.push(created);
  const patterns = type !== undefined ? [type] : types;
  if (patterns) {
    values.push(patterns.map(typePattern));
    where.push(`type LIKE ANY ($${values.length}::text[])`);
  }
  if (delivered === true) where.push("pending_webhooks = 0");
  if (delivered === false) where.push("pending_webhooks > 0");
  return listPage(pool, { table: "events", noun: "event", where, values }, page);
}
