import type { Invariant, Violation } from "./types";

/** Refunds never return more than was captured: at the provider per charge, in our books per payment. */
export const refundsWithinCapture: Invariant = {
  name: "refunded ≤ captured per payment, at the provider and in the books",
  check(e) {
    const violations: Violation[] = [];
    const charges = new Map(e.books.charges.map((c) => [c.id, c]));
    const atProvider = new Map<string, number>();
    for (const r of e.books.providerRefunds)
      atProvider.set(r.charge, (atProvider.get(r.charge) ?? 0) + r.amount);
    for (const [chargeId, refunded] of atProvider) {
      const charge = charges.get(chargeId);
      if (charge?.status !== "succeeded" || refunded > charge.amountReceived)
        violations.push({
          invariant: this.name,
          detail: `the provider refunded ${refunded} of charge ${chargeId} (${charge ? `${charge.status}, ${charge.amount} ${charge.currency}` : "unknown"})`,
        });
    }
    const ours = new Map<string, { captured: number; taken: number; succeeded: number }>();
    for (const r of e.books.refunds) {
      const sums = ours.get(r.paymentId) ?? { captured: r.captured, taken: 0, succeeded: 0 };
      if (r.status !== "failed") sums.taken += r.amountMinor;
      if (r.status === "succeeded") sums.succeeded += r.amountMinor;
      ours.set(r.paymentId, sums);
    }
    for (const [paymentId, s] of ours) {
      if (s.taken > s.captured)
        violations.push({
          invariant: this.name,
          detail: `payment ${paymentId}: refunds pending or succeeded total ${s.taken} of ${s.captured} captured (${s.succeeded} succeeded)`,
        });
    }
    return violations;
  },
};
