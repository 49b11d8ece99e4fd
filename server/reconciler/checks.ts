import type { Charge } from "../provider";
import {
  type AuthorizationMismatchKind,
  checkAuthorization,
  checkCapturedAmount,
  isAuthorizationState,
  type PaymentWithEntries,
} from "./authorizations";
import type { RefundMismatchKind } from "./refunds";

export type { PaymentWithEntries };

export type MismatchKind =
  | "charge_without_postings"
  | "postings_without_charge"
  | "amount_mismatch"
  | "currency_mismatch"
  | "declined_with_postings"
  | "duplicate_charge"
  | "succeeded_without_receipt"
  | "stale_pending_payment"
  | RefundMismatchKind
  | AuthorizationMismatchKind;

export interface Mismatch {
  kind: MismatchKind;
  paymentId: string | null;
  chargeId: string | null;
  /** duplicate_charge: the charge the payment was booked with, beside the duplicate in chargeId. */
  bookedChargeId?: string | null;
  detail: string;
}

/** A run's clock: charges created after `bookingMs` may still be on their way to the books. */
export interface CheckTimes {
  nowMs: number;
  bookingMs: number;
  /** An expiry whose deadline passed after this is the completer's still. */
  expiryMs: number;
}

/**
 * One provider charge against our books. Each charge must be its payment's own: a charge whose
 * metadata names a payment booked with another charge, or names no payment of ours, is money
 * taken twice (or by mistake) and is reported with both ids. Charges younger than the grace
 * period may still be on their way to the books (the completer books them), so "not booked" waits.
 */
export function checkCharge(
  charge: Charge,
  payments: { byId: Map<string, PaymentWithEntries>; byCharge: Map<string, PaymentWithEntries> },
  times: CheckTimes,
): Mismatch | null {
  const namedId = charge.metadata.payment_id ?? null;
  const payment = (namedId && payments.byId.get(namedId)) || payments.byCharge.get(charge.id);
  const settled = Date.parse(charge.createdAt) <= times.bookingMs;
  const moneyTaken = charge.status === "succeeded";
  if (!payment) {
    if (!moneyTaken || !settled) return null;
    return {
      kind: "duplicate_charge",
      paymentId: namedId,
      chargeId: charge.id,
      bookedChargeId: null,
      detail: namedId
        ? `charge of ${charge.amount} ${charge.currency.toUpperCase()} names payment ${namedId}, which is not ours`
        : `charge of ${charge.amount} ${charge.currency.toUpperCase()} names no payment`,
    };
  }
  if (payment.providerChargeId && payment.providerChargeId !== charge.id) {
    if (!moneyTaken) return null;
    return {
      kind: "duplicate_charge",
      paymentId: payment.id,
      chargeId: charge.id,
      bookedChargeId: payment.providerChargeId,
      detail: `a second charge ${charge.id} for payment ${payment.id}, which is booked with ${payment.providerChargeId}`,
    };
  }
  return checkAgainstCharge(payment, charge, times, settled);
}

/**
 * One payment against its own charge. A manual payment's hold and its resolution are compared by
 * checkAuthorization; what was posted (captured), for every payment, here. Pending entries (a
 * hold and its release) are not postings.
 */
function checkAgainstCharge(
  payment: PaymentWithEntries,
  charge: Charge,
  times: CheckTimes,
  settled: boolean,
): Mismatch | null {
  if (isAuthorizationState(payment))
    return checkAuthorization(charge, payment, { ms: times.nowMs, expiryCutoffMs: times.expiryMs });
  const moneyTaken = charge.status === "succeeded";
  const posted = payment.ledgerEntries.filter((e) => !e.pending);
  const clearing = posted.find((e) => e.entryType === "provider_clearing");
  // Declined, canceled or not final yet: nothing taken, so no postings is right.
  if (!moneyTaken) {
    return posted.length > 0
      ? {
          kind: "declined_with_postings",
          paymentId: payment.id,
          chargeId: charge.id,
          detail: `the provider's charge is ${charge.status}, yet the ledger booked it`,
        }
      : null;
  }
  if (!clearing) {
    return settled
      ? {
          kind: "charge_without_postings",
          paymentId: payment.id,
          chargeId: charge.id,
          detail: `charge of ${charge.amount} ${charge.currency.toUpperCase()} has no ledger postings`,
        }
      : null;
  }
  if (clearing.currency !== charge.currency.toUpperCase()) {
    return {
      kind: "currency_mismatch",
      paymentId: payment.id,
      chargeId: charge.id,
      detail: `charge in ${charge.currency.toUpperCase()}, ledger in ${clearing.currency}`,
    };
  }
  const capturedAmount = checkCapturedAmount(charge, payment);
  if (capturedAmount) return capturedAmount;
  // What was taken: all of an automatic payment, a manual one's capture (perhaps less).
  if (Number(clearing.amountMinor) !== charge.amountReceived) {
    return {
      kind: "amount_mismatch",
      paymentId: payment.id,
      chargeId: charge.id,
      detail: `charge of ${charge.amountReceived}, ledger of ${clearing.amountMinor}`,
    };
  }
  return null;
}

/**
 * A booked payment (postings, or a hold) against the provider's copy of its charge, asked for
 * directly (null: the provider has none).
 */
export function checkBooking(
  payment: PaymentWithEntries,
  charge: Charge | null,
  times: CheckTimes,
): Mismatch | null {
  if (!charge) {
    return {
      kind: "postings_without_charge",
      paymentId: payment.id,
      chargeId: payment.providerChargeId,
      detail: "the ledger booked a charge the provider does not have",
    };
  }
  return checkAgainstCharge(payment, charge, times, true);
}
