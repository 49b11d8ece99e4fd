export {
  bookCapture,
  ensureHouseAccounts,
  HOUSE_ACCOUNTS_MISSING,
  type PaymentCapture,
  paymentCapture,
  postPaymentCapture,
} from "./postings";
export { type LedgerCheck, ledgerBalances, verifyLedger } from "./verify";
