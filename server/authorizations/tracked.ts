import { raw } from "@idempotent-checkout/idempotency/sql";

export type ActionKind = "capture" | "cancel";

/** A pending capture or cancel with what its phases need of its payment. */
export interface TrackedAction {
  id: string;
  kind: ActionKind;
  paymentId: string;
  accountId: string;
  orderId: string;
  /** A capture's amount; null: all that is held (and always for a cancel). */
  amountMinor: number | null;
  /** What the payment authorized (the hold). */
  authorizedMinor: number;
  currency: string;
  reason: string;
  providerKey: string;
  providerChargeId: string;
  /** When a request for it may last have left (the database's clock); null: none ever did. */
  requestedAt: string | null;
}

export interface ActionRow {
  id: string;
  kind: ActionKind;
  payment_id: string;
  account_id: string;
  order_id: string;
  amount_minor: number | null;
  authorized_minor: number;
  currency: string;
  reason: string;
  provider_key: string;
  provider_charge_id: string;
  action_requested_at: Date | string | null;
}

export const trackedFromRow = (r: ActionRow): TrackedAction => ({
  id: r.id,
  kind: r.kind,
  paymentId: r.payment_id,
  accountId: r.account_id,
  orderId: r.order_id,
  amountMinor: r.amount_minor,
  authorizedMinor: r.authorized_minor,
  currency: r.currency,
  reason: r.reason,
  providerKey: r.provider_key,
  providerChargeId: r.provider_charge_id,
  requestedAt: r.action_requested_at === null ? null : new Date(r.action_requested_at).toISOString(),
});

/** The columns `ActionRow` reads (authorization_actions `a`, payments `p`). */
export const ACTION_COLUMNS = raw(`a.id, a.kind, a.payment_id, a.account_id, p.order_id, a.amount_minor,
  p.amount_minor AS authorized_minor, p.currency, a.reason, a.provider_key, p.provider_charge_id, a.action_requested_at`);

/** Where an action keeps its "a request may have left" mark. */
export const ACTION_REQUESTED = { table: "authorization_actions", column: "action_requested_at" } as const;
