import { describe, expect, it } from "vitest";
import { formatMoney, minorToInput, parseMoney } from "./money";

describe("money typed by a person", () => {
  it.each([
    ["12", 1200],
    ["12.5", 1250],
    ["12.50", 1250],
    ["0,07", 7],
    [" 3.10 ", 310],
  ])("%s is %i minor units", (text, minor) => {
    expect(parseMoney(text)).toBe(minor);
  });

  it.each(["", "-1", "1.234", "abc", "1e3", "12.", ".5"])("%j is not an amount", (text) => {
    expect(parseMoney(text)).toBeNull();
  });

  it("round-trips what it shows", () => {
    expect(parseMoney(minorToInput(2599))).toBe(2599);
    expect(formatMoney(2599, "EUR")).toBe("€25.99");
  });
});
