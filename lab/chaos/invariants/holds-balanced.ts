import { describePayment, type Invariant, type Violation } from "./types";

/** The ledger's holds balance: a hold is the payment's amount, and its release returns exactly it. */
export const holdsBalanced: Invariant = {
  name: "the ledger's holds balance (hold amount = release amount)",
  check(e) {
    const out: Violation[] = [];
    for (const p of e.books.payments) {
      if (p.holds === 0 && p.releases.length === 0) continue;
      const what = `held ${p.heldMinor} in ${p.holds} holds, released ${p.releasedMinor} in ${p.releases.length} releases`;
      const heldRight = p.heldMinor === p.amountMinor * p.holds;
      const releasedRight = p.releasedMinor === (p.releases.length === 0 ? 0 : p.heldMinor);
      if (!heldRight || !releasedRight || p.releases.length > 1)
        out.push({ invariant: this.name, detail: `${describePayment(p)} of ${p.amountMinor}: ${what}` });
    }
    return out;
  },
};
