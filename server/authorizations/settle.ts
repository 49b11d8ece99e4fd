import { requirement, type StatementWrites, sql } from "@idempotent-checkout/idempotency/sql";
import { holdRelease, paymentCapture } from "../ledger";
import { paymentChangedEvent, paymentSucceededEvent, type SettledPaymentColumns } from "../outbox";
import type { Charge } from "../provider";
import type { TrackedAction } from "./tracked";

/** Settled by another attempt that took our key over: this one answers 409 (LeaseLostError). */
export const ACTION_NOT_PENDING = requirement("authorizations.action_not_pending", { fenced: true });
/** The payment is no longer authorized (the database refuses a second resolution of its hold too). */
export const PAYMENT_NOT_AUTHORIZED = requirement("authorizations.payment_not_authorized");

const hold = (action: TrackedAction) => ({
  paymentId: action.paymentId,
  amountMinor: action.authorizedMinor,
  currency: action.currency,
  description: `Hold of payment ${action.paymentId} for order ${action.orderId}`,
});

function actionSucceeded(b: Parameters<StatementWrites>[0], action: TrackedAction) {
  const done = b.cte<"id">(
    sql`UPDATE authorization_actions SET status = 'succeeded', updated_at = now()
         WHERE id = ${action.id}::uuid AND status = 'pending' RETURNING id`,
    "action_done",
  );
  b.require(sql`(SELECT count(*) FROM ${done}) = 1`, ACTION_NOT_PENDING);
}

/**
 * A capture's phase 3 as one statement: the action succeeded, the payment succeeded with what the
 * provider took, the hold released as captured and the capture posted (the database refuses more
 * than was held, or a hold already voided), the order paid, payment.succeeded for the receipt.
 */
export function settleCapture(
  action: TrackedAction,
  charge: Pick<Charge, "id" | "amountReceived">,
): StatementWrites {
  return (b) => {
    actionSucceeded(b, action);
    const settled = b.cte<SettledPaymentColumns>(
      sql`UPDATE payments SET status = 'succeeded', captured_minor = ${charge.amountReceived}::int, capture_before = NULL,
                 updated_at = now()
           WHERE id = ${action.paymentId}::uuid AND status = 'authorized'
          RETURNING id, order_id, account_id, amount_minor, currency, provider_charge_id, updated_at, captured_minor`,
      "captured",
    );
    b.require(sql`(SELECT count(*) FROM ${settled}) = 1`, PAYMENT_NOT_AUTHORIZED);
    holdRelease(b, hold(action), "hold_captured");
    paymentCapture(b, {
      paymentId: action.paymentId,
      amountMinor: charge.amountReceived,
      currency: action.currency,
      description: `Capture of payment ${action.paymentId} for order ${action.orderId}`,
      providerChargeId: charge.id,
    });
    b.cte(
      sql`UPDATE orders SET status = 'paid', updated_at = now() WHERE id = ${action.orderId}::uuid RETURNING id`,
      "order_paid",
    );
    paymentSucceededEvent(b, action.paymentId, settled);
  };
}

/**
 * A cancel's (or an expiry's) phase 3 as one statement: the action succeeded, the payment canceled
 * (`failure_code`: expired or canceled), the hold voided, the order payable again, payment.canceled.
 */
export function settleCancel(action: TrackedAction): StatementWrites {
  const why = action.reason === "expiry" ? "expired" : "canceled";
  return (b) => {
    actionSucceeded(b, action);
    const settled = b.cte<SettledPaymentColumns>(
      sql`UPDATE payments SET status = 'canceled', failure_code = ${why},
                 failure_message = ${why === "expired" ? "The authorization expired before it was captured." : "The authorization was canceled."},
                 capture_before = NULL, updated_at = now()
           WHERE id = ${action.paymentId}::uuid AND status = 'authorized'
          RETURNING id, order_id, account_id, amount_minor, currency, provider_charge_id, updated_at, captured_minor`,
      "canceled",
    );
    b.require(sql`(SELECT count(*) FROM ${settled}) = 1`, PAYMENT_NOT_AUTHORIZED);
    holdRelease(b, hold(action), "hold_voided");
    b.cte(
      sql`UPDATE orders SET status = 'pending_payment', updated_at = now()
           WHERE id = ${action.orderId}::uuid AND status = 'authorized' RETURNING id`,
      "order_payable",
    );
    paymentChangedEvent(b, "payment.canceled", action.paymentId, settled, why);
  };
}
