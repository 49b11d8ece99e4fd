import { describePayment, type Invariant, reported } from "./types";

/** A payment still pending after the drain is in front of a person: in the report or needs_attention. */
export const unfinishedVisible: Invariant = {
  name: "no unfinished payment invisible",
  check(e) {
    return e.books.payments.flatMap((p) => {
      if (p.status !== "pending") return [];
      const state = e.books.pendingKeyStates.get(p.id) ?? "no key";
      if (state === "needs_attention") return [];
      if (reported(e.books.reportAfterDrain, (m) => m.paymentId === p.id)) return [];
      return [
        {
          invariant: this.name,
          detail: `${describePayment(p)} is still pending after the drain; its key shows ${state} and no report names it`,
        },
      ];
    });
  },
};
