import { chargeOf, chargesById, describePayment, type Invariant, type Violation } from "./types";

/**
 * No capture after a cancel or an expiry: a payment we canceled is canceled at the provider with
 * nothing taken and nothing posted; a payment the provider canceled is never booked as captured;
 * a voided hold is never followed by a posting; at most one capture or cancel succeeds per payment.
 */
export const noCaptureAfterVoid: Invariant = {
  name: "no capture after a cancel or expiry",
  check(e) {
    const out: Violation[] = [];
    const charges = chargesById(e);
    for (const p of e.books.payments) {
      const charge = chargeOf(charges, p);
      const voided = p.releases.includes("hold_voided");
      if (voided && (p.postedMinor !== 0 || p.status !== "canceled"))
        out.push({
          invariant: this.name,
          detail: `${describePayment(p)}: its hold was voided, yet it is ${p.status} with ${p.postedMinor} posted`,
        });
      if (p.status === "canceled" && charge && (charge.status !== "canceled" || charge.amountReceived !== 0))
        out.push({
          invariant: this.name,
          detail: `${describePayment(p)} is canceled in our books; the provider's ${charge.id} is ${charge.status} with ${charge.amountReceived} received`,
        });
      if (charge?.status === "canceled" && (p.status === "succeeded" || p.postedMinor !== 0))
        out.push({
          invariant: this.name,
          detail: `${describePayment(p)} is booked as captured (${p.postedMinor} posted), but the provider canceled ${charge.id} (${charge.cancellationReason ?? "no reason"})`,
        });
    }
    const won = new Map<string, string[]>();
    for (const a of e.books.actions)
      if (a.status === "succeeded")
        won.set(a.paymentId, [...(won.get(a.paymentId) ?? []), `${a.kind} ${a.id}`]);
    for (const [paymentId, actions] of won)
      if (actions.length > 1)
        out.push({
          invariant: this.name,
          detail: `payment ${paymentId} has ${actions.length} succeeded captures or cancels: ${actions.join(", ")}`,
        });
    return out;
  },
};
