import { appCharges, describePayment, type Invariant, succeeded } from "./types";

/**
 * "Nothing was charged" (a failed or declined payment, as the shopper and the admin see it) is
 * true at the end: no succeeded charge at the provider names the payment.
 */
export const nothingChargedIsTrue: Invariant = {
  name: "every 'nothing charged' answer true at the end",
  check(e) {
    const charged = new Map(
      appCharges(e)
        .filter(succeeded)
        .map((c) => [c.metadata.payment_id, c]),
    );
    const said = new Set(
      e.journal.answers
        .filter((a) => a.reason === "payment-abandoned" && a.paymentId)
        .map((a) => a.paymentId),
    );
    return e.books.payments.flatMap((p) => {
      if (p.status !== "failed" && p.status !== "declined" && !said.has(p.id)) return [];
      const charge = charged.get(p.id);
      if (!charge) return [];
      return [
        {
          invariant: this.name,
          detail: `${describePayment(p)} says nothing was charged, but charge ${charge.id} of ${charge.amount} ${charge.currency} succeeded at the provider`,
        },
      ];
    });
  },
};
