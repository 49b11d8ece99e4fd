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
export { type RefundTotals, refundsByStatus, refundsOfOrder, refundsOfPayments, refundTotals } from "./read";
export { REFUND_STATUSES, type RefundRecord, refundView, type TRefund, ZRefund } from "./views";
