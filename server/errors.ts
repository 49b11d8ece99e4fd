import { ErrorDetails } from "@idempotent-checkout/idempotency";
import { TRPCError } from "@trpc/server";
import { type AmountProblem, type AmountUse, amountProblem, currencyOf } from "../shared/currency";

// Extra fields of a domain error's answer; defined by the idempotency layer, which stores them.
export { ErrorDetails, errorDetailsOf } from "@idempotent-checkout/idempotency";

/**
 * Domain errors, each mapped here once to its tRPC code (and so its HTTP status). 4xx outcomes
 * decided by a handler are business outcomes; the idempotency layer stores and replays them.
 */
export const domainErrors = {
  notFound: (what: string) => new TRPCError({ code: "NOT_FOUND", message: `${what} not found.` }),
  forbidden: (message: string) => new TRPCError({ code: "FORBIDDEN", message }),
  conflict: (message: string) => new TRPCError({ code: "CONFLICT", message }),
  invalid: (message: string, details?: Record<string, unknown>) =>
    new TRPCError({ code: "BAD_REQUEST", message, cause: details ? new ErrorDetails(details) : undefined }),
  /**
   * Final when the other payment succeeded. While it is still pending it may yet be declined, so
   * the answer is not stored and says when to ask again.
   */
  orderAlreadyPaid: (payment: { id: string; status: string }) =>
    new TRPCError({
      code: "CONFLICT",
      message: `Order already paid: payment ${payment.id} is ${payment.status}.`,
      cause: new ErrorDetails(
        { reason: "order_already_paid", paymentId: payment.id, paymentStatus: payment.status },
        payment.status === "succeeded" ? undefined : 1,
      ),
    }),
  paymentDeclined: (payment: { id: string }, code: string | null, message: string | null) =>
    new TRPCError({
      code: "PAYMENT_REQUIRED",
      message: message ?? "Your card was declined.",
      cause: new ErrorDetails({
        reason: "card_declined",
        paymentId: payment.id,
        declineCode: code ?? "card_declined",
      }),
    }),
  paymentRefused: (payment: { id: string }, message: string) =>
    new TRPCError({
      code: "PAYMENT_REQUIRED",
      message: `The payment provider refused this payment: ${message}`,
      cause: new ErrorDetails({ reason: "provider_refused", paymentId: payment.id }),
    }),
  paymentCanceled: (payment: { id: string }, cancellationReason: string) =>
    new TRPCError({
      code: "PAYMENT_REQUIRED",
      message:
        cancellationReason === "abandoned"
          ? "The 3-D Secure step was not completed in time, so the payment was canceled. Nothing was charged; the order can be paid again."
          : `The payment was canceled at the provider (${cancellationReason}). Nothing was charged; the order can be paid again.`,
      cause: new ErrorDetails({ reason: "payment_canceled", paymentId: payment.id, cancellationReason }),
    }),
  /**
   * Only an authorized payment is captured or canceled, once. `state` says why not; while another
   * capture or cancel of it is still in progress the answer may change (it may fail), so it is not
   * stored and says when to ask again.
   */
  paymentNotCapturable: (
    payment: { id: string; status: string },
    state: string,
    retryAfterSeconds?: number,
  ) =>
    new TRPCError({
      code: "CONFLICT",
      message: `Payment ${payment.id} is not capturable: it is ${state}.`,
      cause: new ErrorDetails(
        { reason: "payment_not_capturable", paymentId: payment.id, paymentStatus: payment.status, state },
        retryAfterSeconds,
      ),
    }),
  paymentAbandoned: (payment: { id: string }) =>
    new TRPCError({
      code: "PAYMENT_REQUIRED",
      message: "The payment was abandoned before it reached the payment provider; nothing was charged.",
      cause: new ErrorDetails({ reason: "payment_abandoned", paymentId: payment.id }),
    }),
  /** The provider is still working on this payment's charge: the same answer as our own 409. */
  paymentInFlightAtProvider: (retryAfterSeconds: number) =>
    new TRPCError({
      code: "CONFLICT",
      message: "This payment is still in progress at the payment provider; retry after the indicated time.",
      cause: new ErrorDetails({ reason: "in_flight_at_provider" }, retryAfterSeconds),
    }),
  /** Not stored; the key is held for the Retry-After the client is told (docs/decisions/0095). */
  providerUnavailable: (message: string, retryAfterSeconds: number) =>
    new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: `The payment provider is unavailable (${message}); retry with the same Idempotency-Key.`,
      cause: new ErrorDetails({ reason: "provider_unavailable" }, retryAfterSeconds),
    }),
  /**
   * A refund beyond what is left to refund on its payment (decision 0112): 422, stored and replayed
   * when final. While other refunds of the payment are still pending it may yet fit (one may
   * fail), so then it is not stored and says when to ask again.
   */
  refundExceedsRefundable: (
    facts: {
      paymentId: string;
      amountMinor: number;
      refundableMinor: number;
      pendingMinor: number;
      currency: string;
    },
    retryAfterSeconds?: number,
  ) =>
    new TRPCError({
      code: "UNPROCESSABLE_CONTENT",
      message:
        facts.pendingMinor > 0
          ? `The refund of ${facts.amountMinor} exceeds what is left to refund: ${facts.refundableMinor} ${facts.currency} (another ${facts.pendingMinor} is being refunded now).`
          : `The refund of ${facts.amountMinor} exceeds what is left to refund: ${facts.refundableMinor} ${facts.currency}.`,
      cause: new ErrorDetails({ reason: "refund_exceeds_captured", ...facts }, retryAfterSeconds),
    }),
  /**
   * An amount Stripe would not take in its currency (decision 0175): below its minimum charge,
   * above its maximum, or not in its steps (a three-decimal currency's last digit 0, ISK's whole
   * krónur). 422 with the currency's figures; final, so stored and replayed where it is keyed.
   */
  amountInvalidForCurrency: (amountMinor: number, currency: string, problem: AmountProblem) => {
    const c = currencyOf(currency);
    const figures = c
      ? { minimumMinor: c.minimumMinor, maximumMinor: c.maximumMinor, stepMinor: c.step }
      : {};
    return new TRPCError({
      code: "UNPROCESSABLE_CONTENT",
      message: problem.message,
      cause: new ErrorDetails({
        reason: "amount_invalid_for_currency",
        amountCode: problem.code,
        amountMinor,
        currency,
        ...figures,
      }),
    });
  },
  /** Only a succeeded payment is refunded: 422, stored and replayed. */
  paymentNotRefundable: (payment: { id: string; status: string }) =>
    new TRPCError({
      code: "UNPROCESSABLE_CONTENT",
      message: `Payment ${payment.id} is ${payment.status}: only a succeeded payment can be refunded.`,
      cause: new ErrorDetails({
        reason: "payment_not_refundable",
        paymentId: payment.id,
        paymentStatus: payment.status,
      }),
    }),
  /** The refund was abandoned before any request for it left: nothing was refunded. Stored. */
  refundAbandoned: (refund: { id: string; paymentId: string }) =>
    new TRPCError({
      code: "UNPROCESSABLE_CONTENT",
      message: "The refund was abandoned before it reached the payment provider; nothing was refunded.",
      cause: new ErrorDetails({
        reason: "refund_abandoned",
        refundId: refund.id,
        paymentId: refund.paymentId,
      }),
    }),
  /** The provider is still working on a request with this key: the same answer as our own 409. */
  inFlightAtProvider: (retryAfterSeconds: number) =>
    new TRPCError({
      code: "CONFLICT",
      message: "This request is still in progress at the payment provider; retry after the indicated time.",
      cause: new ErrorDetails({ reason: "in_flight_at_provider" }, retryAfterSeconds),
    }),
};

/** The 422 for an amount Stripe would not take in its currency, or null when it would. */
export function invalidAmount(amountMinor: number, currency: string, use: AmountUse): TRPCError | null {
  const problem = amountProblem(amountMinor, currency, use);
  return problem ? domainErrors.amountInvalidForCurrency(amountMinor, currency, problem) : null;
}
