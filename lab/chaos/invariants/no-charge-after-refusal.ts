import { appCharges, type Invariant, succeeded } from "./types";

/**
 * A 4xx the shopper took as final (a 429 they left at, a 402 "nothing was charged", a 404, a
 * 422) leaves nothing that charges later. A 409 with Retry-After is "come back", not final.
 */
export const noChargeAfterRefusal: Invariant = {
  name: "no payment charged after a final 4xx answer",
  check(e) {
    const chargedPayments = new Map(
      appCharges(e)
        .filter(succeeded)
        .map((c) => [c.metadata.payment_id, c]),
    );
    const paymentOfKey = new Map(e.books.payments.map((p) => [`${p.accountId}\n${p.key}`, p]));
    return e.journal.keys.flatMap((k) => {
      const last = k.last;
      if (k.gaveUp === "success" || !last?.status || last.status < 400 || last.status >= 500) return [];
      if (last.status === 409 && last.retryAfter !== null) return [];
      const payment = paymentOfKey.get(`${k.accountId}\n${k.key}`);
      const charge = payment && chargedPayments.get(payment.id);
      if (!payment || !charge) return [];
      return [
        {
          invariant: this.name,
          detail: `key ${k.key} was last answered ${last.status} ${last.reason ?? ""} (the shopper left), yet payment ${payment.id} was charged (${charge.id}, ${Math.round((Date.parse(charge.createdAt) - last.answeredAt) / 1000)} s after that answer)`,
        },
      ];
    });
  },
};
