import { currencyOf, decimalToMinor, displayDecimals, minorToDecimal } from "../shared/currency";

/**
 * Minor units (as Stripe counts them in `currency`) to a display string; amounts stay integers
 * elsewhere. A code outside the table (a row older than it) is shown as it is stored, never scaled.
 */
export function formatMoney(amountMinor: number, currency: string): string {
  const c = currencyOf(currency);
  if (!c) return `${amountMinor} ${currency} (minor units)`;
  const decimals = displayDecimals(c, amountMinor);
  // A decimal string is formatted exactly: no division, no floating point.
  const major = minorToDecimal(amountMinor, c.exponent) as `${number}`;
  return new Intl.NumberFormat("en-IE", {
    style: "currency",
    currency: c.code,
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  }).format(major);
}

/** A typed amount ("12", "12.5", "12.50"; "1200" in yen) to minor units of `currency`; null if not one. */
export function parseMoney(text: string, currency: string): number | null {
  const c = currencyOf(currency);
  return c ? decimalToMinor(text, c.exponent) : null;
}

/** Minor units as a plain amount to type back ("12.50", "2500" in yen, "5.120" in dinars, "5" in krónur). */
export function minorToInput(amountMinor: number, currency: string): string {
  const c = currencyOf(currency);
  if (!c) return String(amountMinor);
  const text = minorToDecimal(amountMinor, c.exponent);
  return displayDecimals(c, amountMinor) === 0 && c.exponent > 0 ? text.slice(0, -(c.exponent + 1)) : text;
}
