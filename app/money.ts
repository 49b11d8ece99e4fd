/** Minor units to a display string; amounts stay integers everywhere else. */
export function formatMoney(amountMinor: number, currency: string): string {
  return new Intl.NumberFormat("en-IE", { style: "currency", currency }).format(amountMinor / 100);
}
