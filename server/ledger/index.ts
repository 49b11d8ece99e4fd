export { type PaymentCapture, postPaymentCapture } from "./postings";
export { type LedgerCheck, ledgerBalances, verifyLedger } from "./verify";
