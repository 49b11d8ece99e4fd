import { LeaseLostError } from "@idempotent-checkout/idempotency";
import { requirement, type StatementWrites, sql } from "@idempotent-checkout/idempotency/sql";
import type { Tx } from "../db";
import { authorizationHold, paymentCapture } from "../ledger";
import {
  type PaymentFacts,
  paymentChangedEvent,
  paymentSucceededEvent,
  type SettledPaymentColumns,
} from "../outbox";
import type { Charge } from "../provider";
import type { TrackedPayment } from "./tracked";

/** Settled by another attempt that took our key over: this one answers 409 (LeaseLostError). */
export const PAYMENT_NOT_PENDING = requirement("payments.not_pending", { fenced: true });
/** The payment's order is gone. */
export const ORDER_NOT_FOUND = requirement("payments.order_not_found");

type Settling = Pick<TrackedPayment, "id" | "orderId" | "amountMinor" | "currency">;

/**
 * Phase 3 as one statement (decision 0016): settle the payment, book the ledger, mark the order
 * paid and write the outbox event; the key's completion joins them in the same statement. Each
 * module adds its own parts and requirements; the ledger and the outbox read the settled row
 * through the typed reference `settled`.
 */
export function settleAndBook(
  payment: Settling,
  charge: Pick<Charge, "id" | "failureCode" | "failureMessage">,
): StatementWrites {
  return (b) => {
    const settled = b.cte<SettledPaymentColumns>(
      sql`
        UPDATE payments
           SET status = 'succeeded', provider_charge_id = ${charge.id}, failure_code = ${charge.failureCode},
               failure_message = ${charge.failureMessage}, updated_at = now()
         WHERE id = ${payment.id}::uuid AND status = 'pending'
        RETURNING id, order_id, account_id, amount_minor, currency, provider_charge_id, updated_at, captured_minor`,
      "settled",
    );
    b.require(sql`(SELECT count(*) FROM ${settled}) = 1`, PAYMENT_NOT_PENDING);
    paymentCapture(b, {
      paymentId: payment.id,
      amountMinor: payment.amountMinor,
      currency: payment.currency,
      description: `Payment ${payment.id} for order ${payment.orderId}`,
      providerChargeId: charge.id,
    });
    const orderPaid = b.cte<"id">(
      sql`UPDATE orders SET status = 'paid', updated_at = now() WHERE id = ${payment.orderId}::uuid RETURNING id`,
      "order_paid",
    );
    b.require(sql`(SELECT count(*) FROM ${orderPaid}) = 1`, ORDER_NOT_FOUND);
    paymentSucceededEvent(b, payment.id, settled);
  };
}

/**
 * Phase 3 of a manual-capture payment, as one statement: the payment authorized with its deadline,
 * the hold booked as pending ledger entries, the order authorized, payment.authorized written; the
 * key's completion joins them.
 */
export function settleAuthorized(
  payment: Settling,
  charge: Pick<Charge, "id">,
  captureBefore: Date,
): StatementWrites {
  return (b) => {
    const settled = b.cte<SettledPaymentColumns>(
      sql`
        UPDATE payments
           SET status = 'authorized', provider_charge_id = ${charge.id}, capture_before = ${captureBefore},
               action_url = NULL, updated_at = now()
         WHERE id = ${payment.id}::uuid AND status = 'pending'
        RETURNING id, order_id, account_id, amount_minor, currency, provider_charge_id, updated_at, captured_minor`,
      "authorized",
    );
    b.require(sql`(SELECT count(*) FROM ${settled}) = 1`, PAYMENT_NOT_PENDING);
    authorizationHold(b, {
      paymentId: payment.id,
      amountMinor: payment.amountMinor,
      currency: payment.currency,
      description: `Authorization of payment ${payment.id} for order ${payment.orderId}`,
    });
    const order = b.cte<"id">(
      sql`UPDATE orders SET status = 'authorized', updated_at = now() WHERE id = ${payment.orderId}::uuid RETURNING id`,
      "order_authorized",
    );
    b.require(sql`(SELECT count(*) FROM ${order}) = 1`, ORDER_NOT_FOUND);
    paymentChangedEvent(b, "payment.authorized", payment.id, settled);
  };
}

/** A charge that took nothing (declined, canceled): its end, fenced by the payment's status. */
export async function settleUnpaid(
  tx: Tx,
  payment: Settling,
  charge: Charge,
  status: "declined" | "failed" | "canceled",
) {
  const [row] = await tx.$queryRaw<(PaymentFacts & { status: string })[]>`
    UPDATE payments
       SET status = ${status}, provider_charge_id = ${charge.id},
           failure_code = ${charge.failureCode}, failure_message = ${charge.failureMessage},
           action_url = NULL, updated_at = now()
     WHERE id = ${payment.id}::uuid AND status = 'pending'
    RETURNING id, order_id AS "orderId", account_id AS "accountId", amount_minor AS "amountMinor", currency,
              status, provider_charge_id AS "providerChargeId", failure_code AS "failureCode",
              updated_at AS "updatedAt"`;
  if (!row) throw new LeaseLostError();
  return row;
}
