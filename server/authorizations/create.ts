import { sql } from "@idempotent-checkout/idempotency/sql";
import { newId, rawQuery, type Tx } from "../db";
import { domainErrors, invalidAmount } from "../errors";
import type { KeyOwner } from "../keys";
import {
  ACTION_COLUMNS,
  type ActionKind,
  type ActionRow,
  type TrackedAction,
  trackedFromRow,
} from "./tracked";

/** A capture's or cancel's request: the payment, a capture's amount (none: all), who asks and why. */
export interface ActionRequest {
  paymentId: string;
  amountMinor?: number | undefined;
  /** operator | expiry */
  reason: "operator" | "expiry";
  createdBy?: string;
}

interface PaymentState {
  id: string;
  status: string;
  amount_minor: number;
  currency: string;
  failure_code: string | null;
  open_kind: ActionKind | null;
  open_status: string | null;
}

/**
 * Phase 1 of a capture or cancel: the payment's row locked (its actions are decided one after
 * another), its state read after the lock, and the pending action inserted with its request marked
 * as leaving. Of two racing, the second finds the first: not capturable, final once the first is.
 */
export async function createAction(
  tx: Tx,
  owner: KeyOwner,
  kind: ActionKind,
  request: ActionRequest,
): Promise<TrackedAction> {
  // The lock in a statement of its own, so the read below sees what committed before it (as refunds).
  await tx.$queryRaw`SELECT 1 FROM payments WHERE id = ${request.paymentId}::uuid FOR UPDATE`;
  const [payment] = await rawQuery<PaymentState>(
    tx,
    sql`SELECT p.id, p.status, p.amount_minor, p.currency, p.failure_code, a.kind AS open_kind, a.status AS open_status
          FROM payments p LEFT JOIN authorization_actions a ON a.payment_id = p.id AND a.status IN ('pending', 'succeeded')
         WHERE p.id = ${request.paymentId}::uuid`,
  );
  if (!payment) throw domainErrors.notFound("Payment");
  if (payment.open_status === "pending") {
    const state = payment.open_kind === "capture" ? "being captured" : "being canceled";
    throw domainErrors.paymentNotCapturable(payment, state, 1);
  }
  if (payment.status !== "authorized") throw notCapturable(payment);
  if (kind === "capture" && request.amountMinor !== undefined) {
    if (request.amountMinor > payment.amount_minor) {
      throw domainErrors.invalid(
        `amountMinor ${request.amountMinor} is more than the ${payment.amount_minor} authorized.`,
        { reason: "capture_exceeds_authorized", authorizedMinor: payment.amount_minor },
      );
    }
    const invalid = invalidAmount(request.amountMinor, payment.currency, "capture");
    if (invalid) throw invalid;
  }
  const createdBy = (request.createdBy ?? "operator").slice(0, 200);
  const [row] = await rawQuery<ActionRow>(
    tx,
    sql`WITH a AS (
          INSERT INTO authorization_actions (id, payment_id, account_id, idempotency_key_id, kind, amount_minor, provider_key,
                                             action_requested_at, reason, created_by)
          SELECT ${newId()}::uuid, p.id, p.account_id, ${owner.keyId}::bigint, ${kind}, ${request.amountMinor ?? null}::int,
                 ${owner.derivedKey(kind)}, now(), ${request.reason}, ${createdBy}
            FROM payments p WHERE p.id = ${request.paymentId}::uuid
          RETURNING *)
        SELECT ${ACTION_COLUMNS} FROM a JOIN payments p ON p.id = a.payment_id`,
  );
  if (!row) throw new Error(`${kind} for key ${owner.keyId} was not inserted`);
  return trackedFromRow(row);
}

/** Why a payment that is not authorized cannot be captured or canceled: a final answer. */
function notCapturable(payment: PaymentState) {
  const state =
    payment.status === "succeeded"
      ? "captured"
      : payment.status === "canceled"
        ? payment.failure_code === "expired"
          ? "expired"
          : "canceled"
        : payment.status;
  // A payment still pending may yet be authorized: ask again.
  return domainErrors.paymentNotCapturable(payment, state, payment.status === "pending" ? 5 : undefined);
}
