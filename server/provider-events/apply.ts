import { sql } from "@idempotent-checkout/idempotency/sql";
import { type Db, rawQuery } from "../db";
import { logger } from "../log";
import { completerOptions } from "../operation";
import { payment } from "../payments/operation";
import type { PaymentProvider } from "../provider";
import { refund } from "../refunds";
import type { ProviderEvent } from "./verify";

export type EventOutcome =
  | "applied"
  | "already_settled"
  | "in_flight"
  | "mismatch"
  | "unknown_object"
  | "ignored";
export type EventSource = "webhook" | "catch_up";
export interface EventDeps {
  prisma: Db;
  provider: PaymentProvider;
}

/** The event could not be applied now (the provider or the database did not answer): ask again. */
export class EventNotApplied extends Error {
  readonly code = "EVENT_NOT_APPLIED";
}

/** The final state each event says its object reached, as our rows name it. */
const PAYMENT_EVENTS: Record<string, string> = {
  "payment_intent.succeeded": "succeeded",
  "payment_intent.payment_failed": "declined",
  "payment_intent.canceled": "canceled",
  "payment_intent.amount_capturable_updated": "authorized",
};
const REFUND_EVENTS: Record<string, string | undefined> = {
  "refund.created": undefined,
  "refund.updated": undefined,
  "refund.failed": "failed",
};
/** The types the catch-up reads back: the ones that can finish a payment or a refund. */
export const EVENT_TYPES = [...Object.keys(PAYMENT_EVENTS), ...Object.keys(REFUND_EVENTS)];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Target {
  kind: "payment" | "refund";
  rowId: string;
  /** The status the event says the object reached (undefined: the provider's object says). */
  implied: string | undefined;
}

function targetOf(event: ProviderEvent): Target | null {
  const meta = event.data.object.metadata ?? {};
  if (event.type in PAYMENT_EVENTS && meta.payment_id)
    return { kind: "payment", rowId: meta.payment_id, implied: PAYMENT_EVENTS[event.type] };
  if (event.type in REFUND_EVENTS && meta.refund_id) {
    const status = event.data.object.status;
    const implied =
      REFUND_EVENTS[event.type] ??
      (status === "succeeded"
        ? "succeeded"
        : status && ["failed", "canceled"].includes(status)
          ? "failed"
          : undefined);
    return { kind: "refund", rowId: meta.refund_id, implied };
  }
  return null;
}

interface TargetRow {
  status: string;
  key_id: bigint | null;
  provider_id: string | null;
}

async function findRow(prisma: Db, target: Target): Promise<TargetRow | null> {
  if (!UUID.test(target.rowId)) return null;
  const rows =
    target.kind === "payment"
      ? await rawQuery<TargetRow>(
          prisma,
          sql`SELECT status, idempotency_key_id AS key_id, provider_charge_id AS provider_id FROM payments WHERE id = ${target.rowId}::uuid`,
        )
      : await rawQuery<TargetRow>(
          prisma,
          sql`SELECT status, idempotency_key_id AS key_id, provider_refund_id AS provider_id FROM refunds WHERE id = ${target.rowId}::uuid`,
        );
  return rows[0] ?? null;
}

/** The event's record, written once by its id (a second write of the same id changes nothing). */
function recordStatement(
  event: ProviderEvent,
  via: EventSource,
  outcome: EventOutcome,
  detail: string | null,
) {
  return sql`INSERT INTO provider_events (id, type, object_id, created_at, via, outcome, detail)
             VALUES (${event.id}, ${event.type}, ${event.data.object.id}, to_timestamp(${event.created}), ${via}, ${outcome}, ${detail})
             ON CONFLICT (id) DO NOTHING`;
}

async function recorded(prisma: Db, id: string): Promise<EventOutcome | null> {
  const [row] = await rawQuery<{ outcome: EventOutcome }>(
    prisma,
    sql`SELECT outcome FROM provider_events WHERE id = ${id}`,
  );
  return row?.outcome ?? null;
}

async function record(
  deps: EventDeps,
  event: ProviderEvent,
  via: EventSource,
  outcome: EventOutcome,
  detail: string | null,
) {
  await rawQuery(deps.prisma, recordStatement(event, via, outcome, detail));
  return { outcome: (await recorded(deps.prisma, event.id)) ?? outcome, duplicate: false };
}

/**
 * Applies one provider event at most once. A pending payment or refund it concerns is driven to
 * its end through its keyed operation (which asks the provider for its current state, so an event
 * older than the state moves nothing back), the event recorded in the same transaction as that
 * end; an event whose object already ended is compared with it and recorded, never re-applied.
 */
export async function applyProviderEvent(
  deps: EventDeps,
  event: ProviderEvent,
  via: EventSource,
): Promise<{ outcome: EventOutcome; duplicate: boolean }> {
  const seen = await recorded(deps.prisma, event.id);
  if (seen) return { outcome: seen, duplicate: true };
  const target = targetOf(event);
  if (!target) return record(deps, event, via, "ignored", null);
  let row = await findRow(deps.prisma, target);
  if (!row) {
    logger.warn(
      { eventId: event.id, type: event.type, object: event.data.object.id },
      "provider event for an unknown object",
    );
    return record(deps, event, via, "unknown_object", `no ${target.kind} ${target.rowId}`);
  }
  if (row.status === "pending" && row.key_id !== null && target.implied !== undefined) {
    const operation = target.kind === "payment" ? payment : refund;
    const drove = await operation.redrive(deps, row.key_id, {
      ...completerOptions(),
      by: `provider event ${event.id}`,
      alongside: recordStatement(event, via, "applied", null),
    });
    if (drove === "failed")
      throw new EventNotApplied(`event ${event.id}: its ${target.kind} could not be settled now`);
    if (drove === "busy")
      return record(deps, event, via, "in_flight", "an attempt holds its key; it settles it");
    if (drove === "settled") return record(deps, event, via, "applied", null);
    row = (await findRow(deps.prisma, target)) ?? row;
  }
  if (row.status === "pending") return record(deps, event, via, "in_flight", "not final yet");
  // An authorization ends by our own keyed capture, cancel or expiry, which may be in flight now.
  if (row.status === "authorized" && target.implied !== "authorized")
    return record(
      deps,
      event,
      via,
      "in_flight",
      "an authorization: its capture, cancel or expiry settles it",
    );
  return settledAlready(deps, event, via, target, row);
}

/** An event for an object that already ended: consistent, older than the state, or a mismatch. */
async function settledAlready(
  deps: EventDeps,
  event: ProviderEvent,
  via: EventSource,
  target: Target,
  row: TargetRow,
) {
  const sameObject = row.provider_id === null || row.provider_id === event.data.object.id;
  if (sameObject && (target.implied === undefined || target.implied === row.status))
    return record(deps, event, via, "already_settled", null);
  // In doubt, the provider's object as it is now: an older event must not move anything back.
  if (sameObject && target.kind === "payment") {
    const now = await deps.provider.getCharge(event.data.object.id).catch(() => {
      throw new EventNotApplied(`event ${event.id}: the provider's payment could not be read`);
    });
    const theirs = now?.status === "requires_action" ? "pending" : now?.status;
    // Payments canceled before issue 40 ended `failed`.
    if (theirs === row.status || (theirs === "canceled" && row.status === "failed"))
      return record(deps, event, via, "already_settled", `older than the payment's ${row.status}`);
  }
  const detail = `ours ${row.status}${row.provider_id ? ` (${row.provider_id})` : ""}, the event's ${target.implied ?? "?"} (${event.data.object.id})`;
  logger.warn({ eventId: event.id, type: event.type, detail }, "provider event contradicts the books");
  return record(deps, event, via, "mismatch", detail);
}
