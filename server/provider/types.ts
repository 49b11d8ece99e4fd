/**
 * The payment provider as the app knows it: payments, refunds and the reconciler use this
 * interface and these shapes only, never a provider's own objects (stripe.ts maps Stripe's).
 */

/**
 * A payment at the provider (with Stripe, a PaymentIntent; its id is `pi_…`):
 * - succeeded: the money was taken;
 * - declined: the card was refused (`failureCode`: the decline code, else the error code);
 *   nothing was taken;
 * - pending: not final (awaiting the customer's authentication, processing, awaiting capture, or
 *   never confirmed): neither taken nor refused, ask again later;
 * - canceled: canceled before any money was taken.
 */
export type ChargeStatus = "succeeded" | "declined" | "pending" | "canceled";

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
}

export interface CreateChargeInput {
  amount: number;
  currency: string;
  paymentMethod: string;
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
   * returned as a Charge with status "declined", not an exception. A payment left pending (the
   * card asks for authentication, say) throws ProviderError kind "pending": not a refusal.
   * Throws ProviderError otherwise.
   */
  createCharge(input: CreateChargeInput, idempotencyKey: string, opts?: CallOptions): Promise<Charge>;
  /** null: no such payment. */
  getCharge(id: string): Promise<Charge | null>;
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
