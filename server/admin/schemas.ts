import { KEY_STATES, OUTCOMES } from "@idempotent-checkout/idempotency/admin";
import { z } from "zod";
import { ZRefund } from "../refunds";

/**
 * The admin API's answers. Ids that are BigInt in the database travel as strings, instants as
 * ISO 8601 strings, money as integer minor units with its currency.
 */

export { KEY_STATES };
export const ZKeyState = z.enum(KEY_STATES);
export type TKeyState = z.infer<typeof ZKeyState>;

const ZInstant = z.iso.datetime();

const INT8_MAX = 9223372036854775807n;

/** A positive BIGINT row id as its decimal string: above the int8 range is a bad request, not a 500. */
export function isInt8Id(value: string): boolean {
  return /^\d{1,19}$/.test(value) && BigInt(value) >= 1n && BigInt(value) <= INT8_MAX;
}

export const ZInt8Id = z.string().refine(isInt8Id, "must be a row id between 1 and 9223372036854775807");

export const ZKeySummary = z.object({
  id: z.string(),
  accountId: z.string(),
  accountHandle: z.string(),
  key: z.string(),
  procedure: z.string(),
  /** For display, as the idempotency package (KEY_STATES) defines it. */
  state: ZKeyState,
  recoveryPoint: z.string(),
  responseStatus: z.number().int().nullable(),
  attempts: z.number().int(),
  /** The completer's own attempts (client takeovers are not counted here). */
  completerAttempts: z.number().int(),
  /** Why the last attempt stopped short, while the key is unfinished. */
  lastError: z.string().nullable(),
  fence: z.number().int(),
  lockedUntil: ZInstant.nullable(),
  createdAt: ZInstant,
  completedAt: ZInstant.nullable(),
  expiresAt: ZInstant,
});
export type TKeySummary = z.infer<typeof ZKeySummary>;

export const ZKeyPage = z.object({ items: z.array(ZKeySummary), nextCursor: z.string().nullable() });
export type TKeyPage = z.infer<typeof ZKeyPage>;

export const ZKeyEvent = z.object({
  id: z.string(),
  kind: z.string(),
  fence: z.number().int(),
  detail: z.string().nullable(),
  at: ZInstant,
});

export const ZCharge = z.object({
  id: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  paymentMethod: z.string(),
  status: z.string(),
  failureCode: z.string().nullable(),
  failureMessage: z.string().nullable(),
  createdAt: z.string(),
  metadata: z.record(z.string(), z.string()),
});

/** What the provider says about a payment's charge; the provider being down is an answer too. */
export const ZChargeLookup = z.discriminatedUnion("state", [
  z.object({ state: z.literal("not_charged") }),
  z.object({ state: z.literal("found"), charge: ZCharge }),
  z.object({ state: z.literal("missing"), chargeId: z.string() }),
  z.object({ state: z.literal("unavailable"), chargeId: z.string(), message: z.string() }),
]);
export type TChargeLookup = z.infer<typeof ZChargeLookup>;

export const ZLedgerEntry = z.object({
  id: z.string(),
  accountCode: z.string(),
  accountName: z.string(),
  entryType: z.string(),
  /** Signed: positive debits, negative credits. */
  amountMinor: z.number().int(),
  currency: z.string(),
});

export const ZLedgerTransaction = z.object({
  id: z.string(),
  paymentId: z.string().nullable(),
  kind: z.string(),
  description: z.string(),
  createdAt: ZInstant,
  entries: z.array(ZLedgerEntry),
});
export type TLedgerTransaction = z.infer<typeof ZLedgerTransaction>;

export const ZPaymentTrail = z.object({
  id: z.string(),
  orderId: z.string(),
  idempotencyKeyId: z.string().nullable(),
  amountMinor: z.number().int(),
  currency: z.string(),
  paymentMethod: z.string(),
  status: z.string(),
  providerChargeId: z.string().nullable(),
  failureCode: z.string().nullable(),
  failureMessage: z.string().nullable(),
  createdAt: ZInstant,
  updatedAt: ZInstant,
  charge: ZChargeLookup,
  ledgerTransactions: z.array(ZLedgerTransaction),
  /** The payment's refunds, oldest first, and what they come to (integer minor units). */
  refunds: z.array(ZRefund),
  refundedMinor: z.number().int(),
  refundableMinor: z.number().int(),
});
export type TPaymentTrail = z.infer<typeof ZPaymentTrail>;

export const ZKeyDetail = ZKeySummary.extend({
  fingerprint: z.string(),
  leaseSeconds: z.number().int(),
  updatedAt: ZInstant,
  requestParams: z.unknown(),
  /** The stored response exactly as replayed: `{ data }` or `{ error }`. */
  responseBody: z.unknown(),
  events: z.array(ZKeyEvent),
  payment: ZPaymentTrail.nullable(),
  /** The refund a refunds.create key created, if any (its payment is `payment`). */
  refund: ZRefund.nullable(),
  /** The capture or cancel a payments.capture / payments.cancel key created (its payment is `payment`). */
  authorizationAction: z
    .object({
      id: z.string(),
      kind: z.enum(["capture", "cancel"]),
      status: z.string(),
      /** A capture's amount asked for (null: all that was held). */
      amountMinor: z.number().int().nullable(),
      reason: z.string(),
      createdBy: z.string(),
      createdAt: ZInstant,
    })
    .nullable(),
});
export type TKeyDetail = z.infer<typeof ZKeyDetail>;

export const ZOrderDetail = z.object({
  id: z.string(),
  accountId: z.string(),
  accountHandle: z.string(),
  status: z.string(),
  totalMinor: z.number().int(),
  currency: z.string(),
  createdAt: ZInstant,
  items: z.array(
    z.object({
      sku: z.string(),
      name: z.string(),
      unitPriceMinor: z.number().int(),
      quantity: z.number().int(),
      lineTotalMinor: z.number().int(),
    }),
  ),
  payments: z.array(ZPaymentTrail),
  /** Every refund of the order's payments, oldest first. */
  refunds: z.array(ZRefund),
});
export type TOrderDetail = z.infer<typeof ZOrderDetail>;

export const ZLedgerCheck = z.object({
  balanced: z.boolean(),
  totals: z.array(z.object({ currency: z.string(), sumMinor: z.number().int() })),
  unbalancedTransactions: z.array(z.object({ transactionId: z.string(), sumMinor: z.number().int() })),
  transactions: z.number().int(),
  entries: z.number().int(),
});

export const ZLedgerBalance = z.object({
  code: z.string(),
  name: z.string(),
  currency: z.string(),
  normalSide: z.string(),
  balanceMinor: z.number().int(),
});

export const ZMismatch = z.object({
  /**
   * charge_without_postings, postings_without_charge, amount_mismatch, currency_mismatch,
   * declined_with_postings, duplicate_charge, succeeded_without_receipt, stale_pending_payment;
   * for refunds refund_without_postings, postings_without_refund, refund_amount_mismatch,
   * refund_beyond_charge; for authorizations capture_without_postings, hold_released_at_provider,
   * hold_amount_mismatch, captured_amount_mismatch, captured_after_cancel, hold_open_at_provider.
   * A string, not an enum: a kind the reconciler learns later must not make stored reports
   * unreadable here.
   */
  kind: z.string(),
  paymentId: z.string().nullable(),
  chargeId: z.string().nullable(),
  /** duplicate_charge: the charge the payment is booked with, beside the duplicate. */
  bookedChargeId: z.string().nullable().optional(),
  detail: z.string(),
  /** The open mismatch's id (for an operator's resolution) and since when it has been seen. */
  id: z.string().optional(),
  firstSeenAt: z.string().optional(),
  lastSeenAt: z.string().optional(),
});

export const ZReconciliationReport = z.object({
  id: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  windowStart: z.string(),
  chargesChecked: z.number().int(),
  paymentsChecked: z.number().int(),
  /** Set when the provider could not be reached: the report holds our side only. */
  providerError: z.string().nullable(),
  mismatches: z.array(ZMismatch),
});
export type TReconciliationReport = z.infer<typeof ZReconciliationReport>;

export const ZOutcome = z.enum(OUTCOMES);

export const ZOutcomeChart = z.object({
  /** The first minute shown; `points[i]` counts the minute starting `i` minutes later. */
  start: ZInstant,
  minutes: z.number().int(),
  /** The procedure charted (payments.create, refunds.create), or null: all of them summed. */
  procedure: z.string().nullable(),
  /** The procedures with counts in the window. */
  procedures: z.array(z.string()),
  series: z.array(
    z.object({ outcome: ZOutcome, points: z.array(z.number().int()), total: z.number().int() }),
  ),
});
export type TOutcomeChart = z.infer<typeof ZOutcomeChart>;

export const ZKeyStateCounts = z.record(ZKeyState, z.number().int());
