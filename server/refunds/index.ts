export { REFUND_PROCEDURE, type RefundDeps, type RefundRequest, refund } from "./operation";
export { OPERATORS_ACCOUNT, operatorsAccount } from "./operators";
export { type RefundTotals, refundsByStatus, refundsOfOrder, refundsOfPayments, refundTotals } from "./read";
export { REFUND_STATUSES, type RefundRecord, refundView, type TRefund, ZRefund } from "./views";
