export {
  bookCapture,
  ensureHouseAccounts,
  HOUSE_ACCOUNTS_MISSING,
  type PaymentCapture,
  paymentCapture,
  postPaymentCapture,
  postRefundReversal,
  type RefundReversal,
} from "./postings";
export { type LedgerCheck, ledgerBalances, verifyLedger } from "./verify";
