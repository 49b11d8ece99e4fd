/**
 * The currencies this checkout charges in, as Stripe defines them (docs.stripe.com/currencies,
 * decision 0175). An amount is an integer of the currency's minor unit *as Stripe counts it*,
 * which is not always ISO 4217's: ISK is counted in hundredths though only whole krónur exist.
 */

/** Stripe's presentment currencies, two-decimal unless listed below. */
// biome-ignore format: a table
const STRIPE_CURRENCIES = [
  "USD", "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
  "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF",
  "CLP", "CNY", "COP", "CRC", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ETB", "EUR", "FJD",
  "FKP", "GBP", "GEL", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS",
  "INR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KRW", "KWD", "KYD", "KZT", "LAK",
  "LBP", "LKR", "LRD", "LSL", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRO", "MUR", "MVR",
  "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK",
  "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SEK", "SGD",
  "SHP", "SLE", "SOS", "SRD", "STD", "SZL", "THB", "TJS", "TND", "TOP", "TTD", "TWD", "TZS", "UAH",
  "UGX", "UYU", "UZS", "VND", "VUV", "WST", "XAF", "XCD", "XOF", "XPF", "YER", "ZAR", "ZMW",
] as const;

export type CurrencyCode = (typeof STRIPE_CURRENCIES)[number];

/** Stripe's zero-decimal currencies: the amount is in whole units (¥500 is 500). */
// biome-ignore format: a table
const ZERO_DECIMAL: readonly CurrencyCode[] = [
  "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF",
  "XOF", "XPF",
];

/** Stripe's three-decimal currencies: the last digit must be 0 (5.124 KWD is refused; 5120 or 5130). */
const THREE_DECIMAL: readonly CurrencyCode[] = ["BHD", "JOD", "KWD", "OMR", "TND"];

/**
 * ISK: zero-decimal in effect, two-decimal in the API for backwards compatibility, so an amount
 * must be a multiple of 100 (charges and refunds alike). HUF and TWD are zero-decimal only for
 * payouts; their charges may carry two decimals, so they are ordinary two-decimal currencies here.
 */
const WHOLE_UNITS_IN_HUNDREDTHS: readonly CurrencyCode[] = ["ISK"];

/** Stripe's minimum charge amounts, in minor units; the others have none listed (`minimumFrom`). */
// biome-ignore format: a table
const STRIPE_MINIMUMS: Partial<Record<CurrencyCode, number>> = {
  USD: 50, AED: 200, AUD: 50, BGN: 100, BRL: 50, CAD: 50, CHF: 50, CZK: 1500, DKK: 250, EUR: 50,
  GBP: 30, HKD: 400, HUF: 17500, INR: 50, JPY: 50, MXN: 1000, MYR: 200, NOK: 300, NZD: 50, PLN: 200,
  RON: 200, SEK: 300, SGD: 50,
};

/** "The amount value supports up to eight digits": 99999999 minor units in every currency. */
export const STRIPE_MAXIMUM_MINOR = 99_999_999;

export interface Currency {
  code: CurrencyCode;
  /** Decimal places of Stripe's minor unit: an amount of 1 is 10^-exponent of the currency. */
  exponent: 0 | 2 | 3;
  /** Every amount is a multiple of this many minor units (10 for three-decimal, 100 for ISK). */
  step: 1 | 10 | 100;
  /** The smallest charge, in minor units. */
  minimumMinor: number;
  /**
   * Where the minimum comes from: Stripe's table, or (no entry there) the smallest amount the
   * currency allows, one step. Stripe's rule for those is "$0.50 US or equivalent", which needs an
   * exchange rate this app does not have, so the provider stays the judge of them.
   */
  minimumFrom: "stripe" | "smallest-amount";
  maximumMinor: number;
}

function rule(code: CurrencyCode): Currency {
  const exponent = ZERO_DECIMAL.includes(code) ? 0 : THREE_DECIMAL.includes(code) ? 3 : 2;
  const step = THREE_DECIMAL.includes(code) ? 10 : WHOLE_UNITS_IN_HUNDREDTHS.includes(code) ? 100 : 1;
  const listed = STRIPE_MINIMUMS[code];
  return {
    code,
    exponent,
    step,
    minimumMinor: listed ?? step,
    minimumFrom: listed === undefined ? "smallest-amount" : "stripe",
    maximumMinor: STRIPE_MAXIMUM_MINOR - (STRIPE_MAXIMUM_MINOR % step),
  };
}

export const CURRENCY_CODES: readonly CurrencyCode[] = STRIPE_CURRENCIES;

export const CURRENCIES: ReadonlyMap<string, Currency> = new Map(
  STRIPE_CURRENCIES.map((code) => [code, rule(code)]),
);
