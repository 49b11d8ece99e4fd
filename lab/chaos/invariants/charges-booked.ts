import { appCharges, type Invariant, paymentsById, reported, succeeded } from "./types";

/** Every succeeded charge the app made is in the ledger once, or the reconciler says it is not. */
export const chargesBooked: Invariant = {
  name: "every succeeded charge booked exactly once or reported",
  check(e) {
    const payments = paymentsById(e);
    const report = e.books.reportAfterDrain;
    return appCharges(e)
      .filter(succeeded)
      .flatMap((c) => {
        const p = payments.get(c.metadata.payment_id ?? "");
        const booked = p?.status === "succeeded" && p.providerChargeId === c.id && p.clearingEntries === 1;
        if (booked || reported(report, (m) => m.chargeId === c.id)) return [];
        const state = p
          ? `its payment ${p.id} is ${p.status}${p.failureCode ? ` (${p.failureCode})` : ""}`
          : "no payment";
        return [
          {
            invariant: this.name,
            detail: `charge ${c.id} (${c.amount} ${c.currency}) is not booked (${state}) and the reconciler does not report it`,
          },
        ];
      });
  },
};
