/** Minor units to a display string; amounts stay integers everywhere else. */
export function formatMoney(amountMinor: number, currency: string): string {
  return new Intl.NumberFormat("en-IE", { style: "currency", currency }).format(amountMinor / 100);
}

/** A typed amount ("12", "12.5", "12.50") to minor units, as formatMoney counts them; null if not one. */
export function parseMoney(text: string): number | null {
  const match = /^\s*(\d{1,11})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match?.[1]) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? "0").padEnd(2, "0"));
}

/** Minor units as a plain amount to type back ("12.50"). */
export function minorToInput(amountMinor: number): string {
  return (amountMinor / 100).toFixed(2);
}
