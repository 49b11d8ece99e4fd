import type { Invariant } from "./types";

/**
 * The provider's events against our records (issue 39): none lost (each the app acts on is
 * recorded, by its webhook or the catch-up, whatever was dropped, duplicated, reordered or
 * delivered to a killed instance), and none about an object of ours recorded as contradicting the
 * books or unknown. Applied at most once and booked once are the ledger's invariants (one booking
 * per charge, charges booked); a duplicate delivery cannot add a row (its id is the key).
 */
export const providerEventsApplied: Invariant = {
  name: "every provider event recorded, none contradicting the books",
  check(e) {
    const ours = new Map(e.books.ourEvents.map((o) => [o.id, o]));
    return e.books.theirEvents.flatMap((event) => {
      const what = `event ${event.id} (${event.type} of ${event.objectId})`;
      const record = ours.get(event.id);
      if (!record) return [{ invariant: this.name, detail: `${what} was never recorded: lost` }];
      // Charges made behind our back carry our metadata: contradicting the books is their point.
      if (e.rogueIds.has(event.objectId)) return [];
      if (record.outcome === "mismatch" || record.outcome === "unknown_object")
        return [
          { invariant: this.name, detail: `${what} recorded ${record.outcome}: ${record.detail ?? ""}` },
        ];
      return [];
    });
  },
};
