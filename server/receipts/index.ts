export {
  CONSUMER_DEFAULTS,
  type ConsumePass,
  type ConsumerOptions,
  consumeReceipts,
  startReceiptsConsumer,
} from "./consumer";
export { type IssueOutcome, issueReceipt, RECEIPTS_CONSUMER } from "./issue";
export { issueRefundReceipt, refundReceiptNumbers, refundReceiptRequest } from "./refund-receipts";
export { receiptView, type TReceiptView } from "./view";
