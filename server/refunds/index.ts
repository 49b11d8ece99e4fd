export {
  completeAbandonedRefunds,
  type RefundCompleterOptions,
  redriveRefund,
  refundCompleterBacklog,
} from "./completer";
export { OPERATORS_ACCOUNT, operatorsAccount } from "./operators";
export {
  executeRefund,
  REFUND_PROCEDURE,
  REFUND_RECOVERY,
  type RefundDeps,
  type RefundRequest,
} from "./phases";
export type { ProviderRefund, RefundProvider } from "./provider";
export { type RefundTotals, refundsByStatus, refundsOfOrder, refundsOfPayments, refundTotals } from "./read";
export {
  checkRefunds,
  REFUND_MISMATCH_KINDS,
  type RefundMismatch,
  type RefundMismatchKind,
} from "./reconcile";
export { REFUND_STATUSES, type RefundRecord, refundView, type TRefund, ZRefund } from "./views";
