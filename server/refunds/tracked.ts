import { raw } from "@idempotent-checkout/idempotency/sql";
import type { RefundRecord } from "./views";

/** A pending refund with what its phases need of its payment. */
export interface TrackedRefund extends RefundRecord {
  accountId: string;
  orderId: string;
  providerKey: string;
  providerChargeId: string;
  /** When a refund request may last have left (the database's clock); null: none ever did. */
  requestedAt: string | null;
}
export interface RefundRow {
  id: string;
  payment_id: string;
  account_id: string;
  order_id: string;
  amount_minor: number;
  currency: string;
  reason: string;
  status: string;
  provider_refund_id: string | null;
  provider_key: string;
  provider_charge_id: string;
  refund_requested_at: Date | null;
  created_at: Date;
}
export const trackedFromRow = (r: RefundRow): TrackedRefund => ({
  id: r.id,
  paymentId: r.payment_id,
  accountId: r.account_id,
  orderId: r.order_id,
  amountMinor: r.amount_minor,
  currency: r.currency,
  reason: r.reason,
  status: r.status,
  providerRefundId: r.provider_refund_id,
  providerKey: r.provider_key,
  providerChargeId: r.provider_charge_id,
  requestedAt: r.refund_requested_at ? new Date(r.refund_requested_at).toISOString() : null,
  createdAt: new Date(r.created_at),
});

/** The columns of a refund row and its payment's that `RefundRow` reads (refunds `r`, payments `p`). */
export const REFUND_COLUMNS =
  raw(`r.id, r.payment_id, r.account_id, p.order_id, r.amount_minor, r.currency, r.reason, r.status,
  r.provider_refund_id, r.provider_key, p.provider_charge_id, r.refund_requested_at, r.created_at`);

/** Where a refund keeps its "a refund request may have left" mark. */
export const REFUND_REQUESTED = { table: "refunds", column: "refund_requested_at" } as const;
