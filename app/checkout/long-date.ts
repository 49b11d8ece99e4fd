/** A date and time as the shopper reads it on a receipt: in UTC, so server and browser agree. */
export function longDate(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", {
    dateStyle: "medium",
    timeStyle: "long",
    timeZone: "UTC",
  });
}
