import { operationCompleter } from "../operation/completer";
import {
  executeRefund,
  REFUND_PROCEDURE,
  REFUND_RECOVERY,
  type RefundDeps,
  type RefundRequest,
} from "./phases";

export type { OperationCompleterOptions as RefundCompleterOptions } from "../operation/completer";

/**
 * Refunds whose attempt died after phase 1, driven to an answer through the same phases as a
 * request: a refund the provider made is always booked, and a refund whose request may have left
 * is never ended as "nothing refunded".
 */
const refunds = operationCompleter<RefundDeps>({
  procedure: REFUND_PROCEDURE,
  startedPoint: REFUND_RECOVERY.started,
  execute: (deps, key, opts) =>
    executeRefund(deps, key.owner, key.requestParams as RefundRequest, {
      createdBy: "completer",
      abandonAfterSeconds: opts.abandonAfterSeconds,
    }),
});

export const completeAbandonedRefunds = refunds.complete;
/** An operator's "re-drive now" of one refund key: the completer's path, at once. */
export const redriveRefund = refunds.redrive;
/** The refund completer's backlog, for /api/metrics. */
export const refundCompleterBacklog = refunds.backlog;
