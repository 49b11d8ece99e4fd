export {
  authorizationHold,
  bookCapture,
  ensureHouseAccounts,
  HOUSE_ACCOUNTS_MISSING,
  type HoldPosting,
  holdRelease,
  type PaymentCapture,
  paymentCapture,
  postPaymentCapture,
  postRefundReversal,
  type RefundReversal,
} from "./postings";
export { type LedgerCheck, ledgerBalances, verifyLedger } from "./verify";
