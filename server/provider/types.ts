/**
 * The payment provider as the app knows it: payments, refunds and the reconciler use this
 * interface and these shapes only, never a provider's own objects (stripe.ts maps Stripe's).
 */

/**
 * A payment at the provider (with Stripe, a PaymentIntent; its id is `pi_…`):
 * - succeeded: the money was taken (`amountReceived`; less than `amount` after a partial capture);
 * - authorized: held, not taken (Stripe's `requires_capture`): `amountCapturable` may be captured
 *   until the hold is canceled or expires;
 * - requires_action: the customer must authenticate (3-D Secure) at `nextActionUrl` first;
 * - declined: the card was refused (`failureCode`: the decline code, else the error code; a failed
 *   authentication is `payment_intent_authentication_failure`); nothing was taken;
 * - pending: not final for another reason (processing, never confirmed): ask again later;
 * - canceled: canceled before any money was taken (`cancellationReason`), or an authorization
 *   released without capture.
 */
export type ChargeStatus =
  | "succeeded"
  | "authorized"
  | "requires_action"
  | "declined"
  | "pending"
  | "canceled";

export interface Charge {
  id: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  status: ChargeStatus;
  failureCode: string | null;
  failureMessage: string | null;
  createdAt: string;
  metadata: Record<string, string>;
  /** What may still be captured (an authorized payment's hold); 0 otherwise. */
  amountCapturable: number;
  /** What was taken: the amount captured; 0 until then. */
  amountReceived: number;
  /** Where to send the customer to authenticate (requires_action only; Stripe's next_action redirect). */
  nextActionUrl: string | null;
  /** Why a canceled payment was canceled (Stripe's cancellation_reason), else null. */
  cancellationReason: string | null;
}

export interface CreateChargeInput {
  amount: number;
  currency: string;
  paymentMethod: string;
  metadata?: Record<string, string>;
  /** "manual": authorize only (the payment ends `authorized`); default "automatic". */
  captureMethod?: "automatic" | "manual";
  /**
   * Where the customer comes back after authenticating (3-D Secure). Without it, a payment method
   * that needs a redirect is not offered (the request fails rather than wait for a customer).
   */
  returnUrl?: string;
}

export interface CaptureChargeInput {
  /** The amount to take, at most `amountCapturable`; the rest of the hold is released. Default all. */
  amount?: number;
  metadata?: Record<string, string>;
}

export interface ListChargesOptions {
  /**
   * Created in this second or later: Stripe's `created` is whole seconds, so a window's edge takes
   * in up to a second before it (never misses one after it).
   */
  createdGte?: Date;
  /** The charges made with this idempotency key (the adapter keeps it in their metadata). */
  idempotencyKey?: string;
  metadata?: Record<string, string>;
}

/** A refund at the provider (`re_…`); `charge` is the refunded payment's id (`pi_…`). */
export interface Refund {
  id: string;
  charge: string;
  amount: number;
  currency: string;
  status: "succeeded";
  createdAt: string;
  metadata: Record<string, string>;
}

export interface CreateRefundInput {
  charge: string;
  amount: number;
  metadata?: Record<string, string>;
}

export interface ListRefundsOptions {
  charge?: string;
  createdGte?: Date;
  idempotencyKey?: string;
  metadata?: Record<string, string>;
}

/** Per call: `fault` is sent as `X-Provider-Fault`, which the test provider obeys (faults for tests). */
export interface CallOptions {
  fault?: string;
}

export interface PaymentProvider {
  /**
   * Creates and confirms (or, for a key seen before, replays) a payment. A decline is an outcome,
   * returned as a Charge with status "declined", not an exception; so are "authorized" (manual
   * capture) and "requires_action" (3-D Secure, with `nextActionUrl`). A payment left pending for
   * another reason (processing) throws ProviderError kind "pending": not a refusal.
   * Throws ProviderError otherwise.
   */
  createCharge(input: CreateChargeInput, idempotencyKey: string, opts?: CallOptions): Promise<Charge>;
  /** null: no such payment. */
  getCharge(id: string): Promise<Charge | null>;
  /**
   * Captures an authorized payment (all, or `amount` of it; Stripe's amount_to_capture), releasing
   * the rest; a key seen before replays. Returns the payment, now succeeded. A payment that is not
   * authorized (already captured, canceled, expired) throws ProviderError kind "rejected", code
   * `payment_intent_unexpected_state`; an amount above the hold: code `amount_too_large`.
   */
  captureCharge(
    id: string,
    input: CaptureChargeInput,
    idempotencyKey: string,
    opts?: CallOptions,
  ): Promise<Charge>;
  /**
   * Cancels a payment that took no money (authorized, requires_action, pending), releasing any hold;
   * a key seen before replays. Returns the payment, now canceled. A succeeded one throws
   * ProviderError kind "rejected", code `payment_intent_unexpected_state`.
   */
  cancelCharge(
    id: string,
    input: { reason?: "abandoned" | "requested_by_customer" | "duplicate" | "fraudulent" },
    idempotencyKey: string,
    opts?: CallOptions,
  ): Promise<Charge>;
  /**
   * Every matching payment, oldest first (createdAt, id). `idempotencyKey` and `metadata` narrow it
   * to one key's, or to those whose metadata holds all the pairs.
   */
  listCharges(opts?: ListChargesOptions): AsyncIterable<Charge>;
  /**
   * Refunds part or all of a succeeded payment (or, for a key seen before, replays the refund). A
   * refusal throws ProviderError kind "rejected" with the provider's `code` (stripe.ts lists them).
   */
  createRefund(input: CreateRefundInput, idempotencyKey: string, opts?: CallOptions): Promise<Refund>;
  /**
   * Every matching refund, oldest first. `charge` narrows to one payment's and is cheap; without it
   * a metadata or key filter walks every refund in the `createdGte` window (Stripe cannot search
   * refunds).
   */
  listRefunds(opts?: ListRefundsOptions): AsyncIterable<Refund>;
  /**
   * The events created since `createdGte` of the given types, newest first (Stripe's /v1/events);
   * `undelivered`: only those whose webhook delivery has not succeeded (`delivery_success=false`).
   */
  listEvents(opts: {
    createdGte: Date;
    types: readonly string[];
    undelivered?: boolean;
  }): AsyncIterable<ListedEvent>;
}

/** An event as the provider lists it (Stripe's Event): read by server/provider-events. */
export interface ListedEvent {
  id: string;
  type: string;
  created: number;
  data: { object: unknown };
}

/** What refunds need of the provider. */
export type RefundProvider = Pick<PaymentProvider, "createRefund" | "listRefunds" | "getCharge">;
