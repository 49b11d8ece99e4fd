import { CURRENCIES, type Currency } from "./table";

/** The currency of an ISO 4217 code as Stripe defines it (any case); undefined when unknown. */
export function currencyOf(code: string): Currency | undefined {
  return CURRENCIES.get(code.toUpperCase());
}

export function isCurrencyCode(code: string): boolean {
  return CURRENCIES.has(code);
}

/** What an amount is for: a charge has Stripe's minimum; a refund, a capture or a price only the steps and maximum. */
export type AmountUse = "charge" | "refund" | "capture" | "price";

export interface AmountProblem {
  /** Stripe's codes where Stripe has one (`amount_too_small`, `amount_too_large`). */
  code:
    | "currency_unknown"
    | "amount_not_positive_integer"
    | "amount_too_small"
    | "amount_too_large"
    | "amount_not_in_steps";
  message: string;
}

/**
 * Whether Stripe would take this amount in this currency, as a problem or null: a positive
 * integer of minor units, at least the currency's minimum (charges only), at most its maximum,
 * and a multiple of its step (three-decimal currencies end in 0; ISK in 00). Pure, so the app,
 * the browser and the provider simulator check amounts by the same rules.
 */
export function amountProblem(
  amountMinor: number,
  currency: string,
  use: AmountUse = "charge",
): AmountProblem | null {
  const c = currencyOf(currency);
  if (!c) return { code: "currency_unknown", message: `${currency} is not a supported currency.` };
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    return {
      code: "amount_not_positive_integer",
      message: `An amount is a positive integer of minor units of ${c.code}.`,
    };
  const shown = (minor: number) => `${minorToDecimal(minor, c.exponent)} ${c.code}`;
  if (amountMinor % c.step !== 0)
    return {
      code: "amount_not_in_steps",
      message:
        c.step === 10
          ? `${c.code} amounts must end in 0 in their third decimal: ${shown(amountMinor)} is not one.`
          : `${c.code} amounts must be whole units: ${shown(amountMinor)} is not one.`,
    };
  if (use === "charge" && amountMinor < c.minimumMinor)
    return {
      code: "amount_too_small",
      message: `${shown(amountMinor)} is below the minimum charge of ${shown(c.minimumMinor)}.`,
    };
  if (amountMinor > c.maximumMinor)
    return {
      code: "amount_too_large",
      message: `${shown(amountMinor)} is above the maximum of ${shown(c.maximumMinor)}.`,
    };
  return null;
}

/** Minor units as an exact decimal string with `exponent` places: (-5125, 3) is "-5.125". */
export function minorToDecimal(amountMinor: number, exponent: number): string {
  if (!Number.isSafeInteger(amountMinor)) throw new RangeError(`not an integer amount: ${amountMinor}`);
  const digits = Math.abs(amountMinor)
    .toString()
    .padStart(exponent + 1, "0");
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent);
  return `${amountMinor < 0 ? "-" : ""}${whole}${exponent > 0 ? `.${fraction}` : ""}`;
}

/**
 * A decimal typed by a person ("12", "12.5", "0,07") to minor units with `exponent` places,
 * exactly (no floating point); null when it is not one or has more decimals than the currency.
 */
export function decimalToMinor(text: string, exponent: number): number | null {
  const match = /^\s*(\d{1,16})(?:[.,](\d+))?\s*$/.exec(text);
  if (!match?.[1]) return null;
  const fraction = match[2] ?? "";
  if (fraction.length > exponent) return null;
  const minor = Number(match[1] + fraction.padEnd(exponent, "0"));
  return Number.isSafeInteger(minor) ? minor : null;
}

/**
 * How many decimals to show: the currency's, except where an amount is whole units counted in
 * hundredths (ISK): "ISK 5", not "ISK 5.00" (a fraction, never valid, is still shown in full).
 */
export function displayDecimals(c: Currency, amountMinor: number): number {
  return c.step === 10 ** c.exponent && amountMinor % c.step === 0 ? 0 : c.exponent;
}
