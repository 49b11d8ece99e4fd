/**
 * The API objects as Stripe shapes them (PaymentIntent, Charge, Refund), built in TypeScript and
 * stored as the JSON answered (schema.ts).
 */
import { randomBytes } from "node:crypto";
import { paymentMethodObject, TEST_CARDS } from "./test-cards";

/** The API version the simulator speaks, and stamps on its events (stripe 23.2.0's own). */
export const API_VERSION = "2026-11-18.endive";

export type IntentStatus =
  | "requires_payment_method"
  | "requires_confirmation"
  | "requires_action"
  | "processing"
  | "requires_capture"
  | "succeeded"
  | "canceled";

export type CaptureMethod = "automatic" | "automatic_async" | "manual";

/** A decline (with its charge), or a failed 3-D Secure authentication (no charge was attempted). */
export type LastPaymentError =
  | {
      type: "card_error";
      code: string;
      decline_code: string;
      message: string;
      charge: string;
      doc_url: string;
      payment_method: ReturnType<typeof paymentMethodObject>;
    }
  | {
      type: "invalid_request_error";
      code: "payment_intent_authentication_failure";
      message: string;
      doc_url: string;
      payment_method: ReturnType<typeof paymentMethodObject>;
    };

export interface PaymentIntent {
  id: string;
  object: "payment_intent";
  amount: number;
  amount_capturable: number;
  amount_received: number;
  canceled_at: number | null;
  cancellation_reason: string | null;
  capture_method: CaptureMethod;
  client_secret: string;
  confirmation_method: "automatic";
  created: number;
  currency: string;
  customer: null;
  description: string | null;
  last_payment_error: LastPaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: Record<string, unknown> | null;
  payment_method: string | null;
  payment_method_types: string[];
  processing: null;
  status: IntentStatus;
}

export interface Charge {
  id: string;
  object: "charge";
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  created: number;
  currency: string;
  description: string | null;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Record<string, string>;
  outcome: Record<string, unknown>;
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: { type: "card"; card: Record<string, unknown> };
  refunded: boolean;
  status: "succeeded" | "failed";
}

export interface Refund {
  id: string;
  object: "refund";
  amount: number;
  charge: string;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string | null;
  status: "succeeded";
}

export const unixSeconds = (at: Date) => Math.floor(at.getTime() / 1000);

export function newPaymentIntent(
  id: string,
  created: Date,
  input: {
    amount: number;
    currency: string;
    paymentMethod: string | null;
    captureMethod: CaptureMethod;
    metadata: Record<string, string>;
    description: string | null;
  },
): PaymentIntent {
  return {
    id,
    object: "payment_intent",
    amount: input.amount,
    amount_capturable: 0,
    amount_received: 0,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: input.captureMethod,
    client_secret: `${id}_secret_${randomBytes(12).toString("hex")}`,
    confirmation_method: "automatic",
    created: unixSeconds(created),
    currency: input.currency,
    customer: null,
    description: input.description,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: input.metadata,
    next_action: null,
    payment_method: input.paymentMethod,
    payment_method_types: ["card"],
    processing: null,
    status: input.paymentMethod ? "requires_confirmation" : "requires_payment_method",
  };
}

function cardDetails(paymentMethod: string, created: number) {
  return paymentMethodObject(paymentMethod, created).card;
}

export function newCharge(
  id: string,
  created: Date,
  pi: PaymentIntent,
  paymentMethod: string,
  result:
    | { captured: boolean; captureBefore?: number }
    | { failureCode: string; declineCode: string; message: string },
): Charge {
  const failed = "failureCode" in result;
  const captured = !failed && result.captured;
  // An authorization's deadline, as Stripe shows it (Stripe refunds it, uncaptured, then).
  const captureBefore = !failed && !captured ? result.captureBefore : undefined;
  const brand = TEST_CARDS.get(paymentMethod)?.brand ?? "visa";
  return {
    id,
    object: "charge",
    amount: pi.amount,
    amount_captured: captured ? pi.amount : 0,
    amount_refunded: 0,
    captured,
    created: unixSeconds(created),
    currency: pi.currency,
    description: pi.description,
    failure_code: failed ? result.failureCode : null,
    failure_message: failed ? result.message : null,
    livemode: false,
    metadata: pi.metadata,
    outcome: failed
      ? {
          network_status: "declined_by_network",
          reason: result.declineCode,
          risk_level: "normal",
          seller_message: "The bank did not return any further details with this decline.",
          type: "issuer_declined",
        }
      : {
          network_status: "approved_by_network",
          reason: null,
          risk_level: "normal",
          seller_message: "Payment complete.",
          type: "authorized",
        },
    paid: !failed,
    payment_intent: pi.id,
    payment_method: paymentMethod,
    payment_method_details: {
      type: "card",
      card: {
        ...cardDetails(paymentMethod, unixSeconds(created)),
        brand,
        ...(captureBefore !== undefined && { capture_before: captureBefore }),
      },
    },
    refunded: false,
    status: failed ? "failed" : "succeeded",
  };
}

export function newRefund(
  id: string,
  created: Date,
  charge: Charge,
  amount: number,
  metadata: Record<string, string>,
  reason: string | null,
): Refund {
  return {
    id,
    object: "refund",
    amount,
    charge: charge.id,
    created: unixSeconds(created),
    currency: charge.currency,
    metadata,
    payment_intent: charge.payment_intent,
    reason,
    status: "succeeded",
  };
}

/** The attributes of `before` that `after` changed, as an event's `previous_attributes`. */
export function changedFrom<T extends object>(before: T, after: T): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(before)) {
    if (JSON.stringify(value) !== JSON.stringify((after as Record<string, unknown>)[name]))
      previous[name] = value;
  }
  return previous;
}
