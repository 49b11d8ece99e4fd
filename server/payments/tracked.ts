import { raw } from "@idempotent-checkout/idempotency/sql";
import type { Payment } from "../generated/prisma/client";

/** A pending payment as its phases run it; `requestedAt`: when a charge request may last have left. */
export type TrackedPayment = Pick<
  Payment,
  | "id"
  | "orderId"
  | "accountId"
  | "amountMinor"
  | "currency"
  | "paymentMethod"
  | "providerKey"
  | "captureMethod"
  | "returnUrl"
  | "actionUrl"
> & { requestedAt: string | null };

export interface PaymentRow {
  id: string;
  order_id: string;
  account_id: string;
  amount_minor: number;
  currency: string;
  payment_method: string;
  provider_key: string;
  charge_requested_at: string | Date | null;
  capture_method: string;
  return_url: string | null;
  action_url: string | null;
}

export const PAYMENT_COLUMNS = raw(
  "id, order_id, account_id, amount_minor, currency, payment_method, provider_key, charge_requested_at, capture_method, return_url, action_url",
);

export const trackedFromRow = (r: PaymentRow): TrackedPayment => ({
  id: r.id,
  orderId: r.order_id,
  accountId: r.account_id,
  amountMinor: r.amount_minor,
  currency: r.currency,
  paymentMethod: r.payment_method,
  providerKey: r.provider_key,
  requestedAt: r.charge_requested_at === null ? null : new Date(r.charge_requested_at).toISOString(),
  captureMethod: r.capture_method,
  returnUrl: r.return_url,
  actionUrl: r.action_url,
});
