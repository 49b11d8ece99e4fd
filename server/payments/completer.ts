import { operationCompleter } from "../operation/completer";
import { executePayment, PAYMENT_PROCEDURE, type PaymentDeps, type PaymentRequest, RECOVERY } from "./phases";

export { completerOptions, type OperationCompleterOptions as CompleterOptions } from "../operation/completer";

export { PAYMENT_PROCEDURE };

export const DEFAULT_ABANDON_AFTER_SECONDS = 3600;

/**
 * Payments whose attempt died after phase 1 (the client may never come back), driven to
 * completion through the same phases as a request, so a charge the provider made is always
 * booked. A payment for which no charge request ever left is failed once `abandonAfterSeconds`
 * old (nothing charged; the order is free to pay again); one whose request may be out is re-sent
 * with the same key, never abandoned. A key whose attempts never began their work ("started":
 * no payment exists, nothing was sent) is left to the client's retry, or to expiry.
 */
const payments = operationCompleter<PaymentDeps>({
  procedure: PAYMENT_PROCEDURE,
  startedPoint: RECOVERY.started,
  execute: (deps, key, opts) =>
    executePayment(deps, key.owner, key.accountId, key.requestParams as PaymentRequest, {
      abandonAfterSeconds: opts.abandonAfterSeconds ?? DEFAULT_ABANDON_AFTER_SECONDS,
    }),
});

export const completeAbandonedPayments = payments.complete;
/** An operator's "re-drive now": the same path as the completer, at once. */
export const redrivePayment = payments.redrive;
/** The completer's backlog, for /api/metrics: payments past phase 1 whose attempt is gone. */
export const completerBacklog = payments.backlog;
