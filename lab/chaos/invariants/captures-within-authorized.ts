import { appCharges, chargeOf, chargesById, describePayment, type Invariant, type Violation } from "./types";

/**
 * Captured ≤ authorized, and each capture is what the provider took: at the provider per payment
 * (amount received ≤ amount), in our books per manual payment (captured_minor ≤ amount_minor), and
 * a captured payment's captured_minor, its posting and the provider's amount_received agree.
 */
export const capturesWithinAuthorized: Invariant = {
  name: "captured ≤ authorized, each capture the provider's amount",
  check(e) {
    const out: Violation[] = [];
    for (const c of appCharges(e))
      if (c.amountReceived > c.amount)
        out.push({
          invariant: this.name,
          detail: `the provider took ${c.amountReceived} of payment ${c.id}, authorized for ${c.amount} ${c.currency}`,
        });
    const charges = chargesById(e);
    for (const p of e.books.payments) {
      if (p.captureMethod !== "manual") continue;
      if (p.capturedMinor !== null && p.capturedMinor > p.amountMinor)
        out.push({
          invariant: this.name,
          detail: `${describePayment(p)} captured ${p.capturedMinor} of ${p.amountMinor} authorized`,
        });
      if (p.status !== "succeeded") continue;
      const charge = chargeOf(charges, p);
      const theirs = charge ? `${charge.status}, received ${charge.amountReceived}` : "no provider payment";
      if (
        charge?.status === "succeeded" &&
        charge.amountReceived === p.capturedMinor &&
        p.postedMinor === p.capturedMinor
      )
        continue;
      out.push({
        invariant: this.name,
        detail: `${describePayment(p)} booked a capture of ${p.capturedMinor} (posted ${p.postedMinor}); the provider says ${theirs}`,
      });
    }
    return out;
  },
};
