import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { currencyOf } from "../shared/currency";
import { formatMoney, minorToInput, parseMoney } from "./money";

/** Zero-, two- and three-decimal currencies, and ISK (whole krónur counted in hundredths). */
const SAMPLE = ["JPY", "KRW", "EUR", "USD", "GBP", "HUF", "ISK", "JOD", "KWD", "BHD"] as const;

describe("money typed by a person", () => {
  it.each([
    ["12", "EUR", 1200],
    ["12.5", "EUR", 1250],
    ["12.50", "EUR", 1250],
    ["0,07", "EUR", 7],
    [" 3.10 ", "EUR", 310],
    ["2500", "JPY", 2500],
    ["5.12", "JOD", 5120],
    ["5.125", "JOD", 5125],
    ["5", "ISK", 500],
  ] as const)("%s %s is %i minor units", (text, currency, minor) => {
    expect(parseMoney(text, currency)).toBe(minor);
  });

  it.each([
    ["", "EUR"],
    ["-1", "EUR"],
    ["1.234", "EUR"],
    ["abc", "EUR"],
    ["1e3", "EUR"],
    ["12.", "EUR"],
    [".5", "EUR"],
    ["12.5", "JPY"],
    ["1.2345", "JOD"],
    ["12", "XYZ"],
  ] as const)("%j in %s is not an amount", (text, currency) => {
    expect(parseMoney(text, currency)).toBeNull();
  });

  it("shows each currency with its own decimals", () => {
    expect(formatMoney(2599, "EUR")).toBe("€25.99");
    expect(formatMoney(2500, "JPY")).toBe("JP¥2,500");
    expect(formatMoney(5120, "JOD")).toBe("JOD\u00a05.120");
    expect(formatMoney(500, "ISK")).toBe("ISK\u00a05");
    expect(formatMoney(-150, "EUR")).toBe("-€1.50");
    expect(minorToInput(2599, "EUR")).toBe("25.99");
    expect(minorToInput(2500, "JPY")).toBe("2500");
    expect(minorToInput(5120, "JOD")).toBe("5.120");
    expect(minorToInput(500, "ISK")).toBe("5");
  });

  it("a code outside the table is shown as stored, never scaled", () => {
    expect(formatMoney(2500, "XYZ")).toBe("2500 XYZ (minor units)");
  });

  it("parse(input(x)) is x in every currency, and the display has the currency's decimals (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SAMPLE), fc.integer({ min: 0, max: 99_999_999 }), (code, n) => {
        const c = currencyOf(code);
        if (!c) return false;
        const minor = n - (n % c.step); // amounts valid in the currency
        if (parseMoney(minorToInput(minor, code), code) !== minor) return false;
        const shown = formatMoney(minor, code);
        const decimals = /[.](\d+)/.exec(shown)?.[1]?.length ?? 0;
        return decimals === (code === "ISK" ? 0 : c.exponent);
      }),
    );
  });

  it("the display's number is the amount in major units, exactly (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SAMPLE), fc.integer({ min: 0, max: 99_999_999 }), (code, n) => {
        const c = currencyOf(code);
        if (!c) return false;
        const minor = n - (n % c.step);
        const digits = formatMoney(minor, code).replace(/[^\d]/g, "");
        // The digits shown, read as an integer, scaled back by the decimals not shown (ISK's 00).
        const hidden = c.exponent - ((/[.](\d+)/.exec(formatMoney(minor, code))?.[1]?.length ?? 0) as number);
        return Number(digits) * 10 ** hidden === minor;
      }),
    );
  });
});
