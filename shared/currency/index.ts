export {
  type AmountProblem,
  type AmountUse,
  amountProblem,
  currencyOf,
  decimalToMinor,
  displayDecimals,
  isCurrencyCode,
  minorToDecimal,
} from "./amounts";
export { ZCurrencyCode, ZCurrencyOfAmount, zMoney } from "./schemas";
export { CURRENCIES, CURRENCY_CODES, type Currency, type CurrencyCode, STRIPE_MAXIMUM_MINOR } from "./table";
