import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  amountProblem,
  CURRENCIES,
  CURRENCY_CODES,
  currencyOf,
  decimalToMinor,
  isCurrencyCode,
  minorToDecimal,
  ZCurrencyCode,
  ZCurrencyOfAmount,
  zMoney,
} from ".";

const ZERO = [
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "UGX",
  "VND",
  "VUV",
  "XAF",
  "XOF",
  "XPF",
];
const THREE = ["BHD", "JOD", "KWD", "OMR", "TND"];
/** One currency of each kind, and ISK (two decimals, whole krónur only). */
const SAMPLE = ["JPY", "EUR", "USD", "GBP", "HUF", "ISK", "JOD", "KWD", "IDR"] as const;

describe("the currency table, as Stripe defines it", () => {
  it("has Stripe's zero- and three-decimal currencies, and two decimals for the others", () => {
    for (const code of CURRENCY_CODES) {
      const expected = ZERO.includes(code) ? 0 : THREE.includes(code) ? 3 : 2;
      expect(currencyOf(code)?.exponent, code).toBe(expected);
    }
    expect([...ZERO, ...THREE].every((c) => CURRENCIES.has(c))).toBe(true);
  });

  it("keeps Stripe's special cases: ISK in hundredths of whole krónur; HUF and TWD two-decimal for charges; UGX zero-decimal", () => {
    expect(currencyOf("ISK")).toMatchObject({ exponent: 2, step: 100 });
    expect(currencyOf("HUF")).toMatchObject({ exponent: 2, step: 1, minimumMinor: 17500 });
    expect(currencyOf("TWD")).toMatchObject({ exponent: 2, step: 1 });
    expect(currencyOf("UGX")).toMatchObject({ exponent: 0, step: 1 });
  });

  it("has Stripe's minimum charges where Stripe lists one, and the smallest amount elsewhere", () => {
    expect(currencyOf("USD")).toMatchObject({ minimumMinor: 50, minimumFrom: "stripe" });
    expect(currencyOf("EUR")).toMatchObject({ minimumMinor: 50, minimumFrom: "stripe" });
    expect(currencyOf("GBP")).toMatchObject({ minimumMinor: 30, minimumFrom: "stripe" });
    expect(currencyOf("JPY")).toMatchObject({ minimumMinor: 50, minimumFrom: "stripe" });
    expect(currencyOf("IDR")).toMatchObject({ minimumMinor: 1, minimumFrom: "smallest-amount" });
    expect(currencyOf("JOD")).toMatchObject({ minimumMinor: 10, minimumFrom: "smallest-amount" });
    expect(currencyOf("ISK")).toMatchObject({ minimumMinor: 100, minimumFrom: "smallest-amount" });
  });

  it("refuses unknown codes, and wants the app's codes in upper case", () => {
    for (const code of ["XXX", "EURO", "", "eur", "BTC"]) expect(isCurrencyCode(code), code).toBe(false);
    expect(ZCurrencyCode.safeParse("XYZ").success).toBe(false);
    expect(ZCurrencyCode.safeParse("eur").success).toBe(false);
    expect(ZCurrencyCode.parse("JPY")).toBe("JPY");
    // An answer's currency is read back as stored: only its shape is checked on the way out.
    expect(ZCurrencyOfAmount.safeParse("QAB").success).toBe(true);
    expect(ZCurrencyOfAmount.safeParse("eur").success).toBe(false);
    expect(amountProblem(100, "XYZ")?.code).toBe("currency_unknown");
    // The provider speaks Stripe's lower case; the rules are the same.
    expect(amountProblem(5125, "jod")?.code).toBe("amount_not_in_steps");
  });
});

describe("amounts valid in their currency", () => {
  it.each([
    [49, "EUR", "charge", "amount_too_small"],
    [50, "EUR", "charge", null],
    [29, "GBP", "charge", "amount_too_small"],
    [30, "GBP", "charge", null],
    [49, "JPY", "charge", "amount_too_small"],
    [50, "JPY", "charge", null],
    [5125, "JOD", "charge", "amount_not_in_steps"],
    [5120, "JOD", "refund", null],
    [5125, "JOD", "refund", "amount_not_in_steps"],
    [550, "ISK", "charge", "amount_not_in_steps"],
    [500, "ISK", "charge", null],
    [1, "EUR", "refund", null],
    [100_000_000, "EUR", "refund", "amount_too_large"],
    [99_999_999, "JPY", "charge", null],
    [0, "EUR", "refund", "amount_not_positive_integer"],
    [12.5, "EUR", "charge", "amount_not_positive_integer"],
  ] as const)("%i %s as a %s: %s", (amount, currency, use, code) => {
    expect(amountProblem(amount, currency, use)?.code ?? null).toBe(code);
  });

  it("says what is wrong in the currency's own decimals", () => {
    expect(amountProblem(5125, "JOD")?.message).toBe(
      "JOD amounts must end in 0 in their third decimal: 5.125 JOD is not one.",
    );
    expect(amountProblem(20, "EUR")?.message).toBe("0.20 EUR is below the minimum charge of 0.50 EUR.");
  });

  it("enforces the minimum and maximum of every currency (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...CURRENCY_CODES), fc.integer({ min: 1, max: 200_000_000 }), (code, n) => {
        const c = currencyOf(code);
        if (!c) return false;
        const amount = n * c.step;
        const problem = amountProblem(amount, code, "charge");
        if (amount < c.minimumMinor) return problem?.code === "amount_too_small";
        if (amount > c.maximumMinor) return problem?.code === "amount_too_large";
        return problem === null;
      }),
    );
  });

  it("the zod schema refuses what amountProblem refuses, on amountMinor", () => {
    const result = zMoney("refund").safeParse({ amountMinor: 5125, currency: "JOD" });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["amountMinor"]);
    expect(zMoney().safeParse({ amountMinor: 2500, currency: "JPY" }).success).toBe(true);
    expect(zMoney().safeParse({ amountMinor: 2500, currency: "XYZ" }).success).toBe(false);
  });
});

describe("exact conversions between minor units and decimals", () => {
  it("minor → decimal → minor is the identity, in integers, for 0-, 2- and 3-decimal currencies (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SAMPLE),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (code, minor) => {
          const exponent = currencyOf(code)?.exponent ?? -1;
          const text = minorToDecimal(minor, exponent);
          const [, fraction = ""] = text.split(".");
          return fraction.length === exponent && decimalToMinor(text, exponent) === minor;
        },
      ),
    );
  });

  it("a decimal with at most the currency's places is exactly its minor units (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 2, 3),
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.nat({ max: 999 }),
        (exponent, whole, fraction) => {
          const f = fraction % 10 ** exponent;
          const text = exponent === 0 ? String(whole) : `${whole}.${String(f).padStart(exponent, "0")}`;
          return decimalToMinor(text, exponent) === whole * 10 ** exponent + f;
        },
      ),
    );
  });

  it("refuses more places than the currency has, and what is not a decimal", () => {
    expect(decimalToMinor("12.5", 0)).toBeNull();
    expect(decimalToMinor("1.234", 2)).toBeNull();
    expect(decimalToMinor("1.2345", 3)).toBeNull();
    for (const text of ["", "-1", "abc", "1e3", "12.", ".5", "1,000.00"])
      expect(decimalToMinor(text, 2), text).toBeNull();
    expect(minorToDecimal(-5125, 3)).toBe("-5.125");
    expect(minorToDecimal(7, 2)).toBe("0.07");
  });
});
