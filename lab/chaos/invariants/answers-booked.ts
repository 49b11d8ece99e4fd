import { type Invariant, paymentsById } from "./types";

/** Every success a client was shown is in our books, with the charge it was shown. */
export const answersBooked: Invariant = {
  name: "every 200 a client saw booked",
  check(e) {
    const payments = paymentsById(e);
    const seen = new Set<string>();
    return e.journal.answers.flatMap((a) => {
      if ((a.status !== 200 && a.status !== 201) || a.paymentStatus !== "succeeded" || !a.paymentId)
        return [];
      if (seen.has(a.paymentId)) return [];
      seen.add(a.paymentId);
      const p = payments.get(a.paymentId);
      if (p?.status === "succeeded" && p.providerChargeId === a.providerChargeId && p.clearingEntries === 1)
        return [];
      return [
        {
          invariant: this.name,
          detail: `key ${a.key} was answered ${a.status} succeeded for payment ${a.paymentId} (charge ${a.providerChargeId}), but the books say ${p ? `${p.status}, charge ${p.providerChargeId}, ${p.clearingEntries} clearing entries` : "no such payment"}`,
        },
      ];
    });
  },
};
