export {
  ensureHouseAccounts,
  HOUSE_ACCOUNTS_MISSING,
  ledgerLegsBooked,
  type PaymentCapture,
  paymentCaptureSql,
  postPaymentCapture,
  postRefundReversal,
  type RefundReversal,
} from "./postings";
export { type LedgerCheck, ledgerBalances, verifyLedger } from "./verify";
