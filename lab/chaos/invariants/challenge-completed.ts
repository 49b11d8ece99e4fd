import {
  appCharges,
  chargeOf,
  chargesById,
  describePayment,
  type Invariant,
  paymentsById,
  type Violation,
} from "./types";

/** Statuses in which money was taken or is held. */
const CHARGED = new Set(["succeeded", "authorized"]);

/**
 * No "requires_action" payment charged without the shopper's completion: every payment the
 * provider took or holds after a 3-D Secure challenge had that challenge completed at the
 * provider; every such payment in our books too; and no shopper who failed or abandoned the step
 * (never pressing complete) was charged, at the provider or in our books.
 */
export const chargedOnlyAfterChallenge: Invariant = {
  name: "no 3-D Secure payment charged without the shopper's completion",
  check(e) {
    const out: Violation[] = [];
    const completed = new Set(
      e.books.challenges.filter((c) => c.outcome === "succeeded").map((c) => c.paymentIntent),
    );
    const challenged = new Set(e.books.challenges.map((c) => c.paymentIntent));
    const charges = appCharges(e);
    for (const c of charges) {
      const asked = challenged.has(c.id) || c.paymentMethod === "pm_card_authenticationRequired";
      if (!asked || !(CHARGED.has(c.status) || c.amountReceived > 0) || completed.has(c.id)) continue;
      out.push({
        invariant: this.name,
        detail: `the provider's ${c.id} (${c.paymentMethod}, ${c.status}, received ${c.amountReceived}) has no completed challenge`,
      });
    }
    for (const p of e.books.payments) {
      if (p.paymentMethod !== "pm_card_authenticationRequired" || !CHARGED.has(p.status)) continue;
      if (p.providerChargeId && completed.has(p.providerChargeId)) continue;
      out.push({
        invariant: this.name,
        detail: `${describePayment(p)} with ${p.paymentMethod} is booked ${p.status}, but the provider's ${p.providerChargeId ?? "payment"} has no completed challenge`,
      });
    }
    const byId = paymentsById(e);
    const paymentOfKey = new Map(e.books.payments.map((p) => [`${p.accountId}\n${p.key}`, p]));
    const chargeById = new Map(charges.map((c) => [c.id, c]));
    for (const step of e.journal.challenges) {
      if (step.url === null || step.pressed.some((x) => x.action === "complete")) continue;
      const p =
        (step.paymentId && byId.get(step.paymentId)) || paymentOfKey.get(`${step.accountId}\n${step.key}`);
      if (!p) continue;
      const charge = p.providerChargeId ? chargeById.get(p.providerChargeId) : undefined;
      const theirs = charge && (CHARGED.has(charge.status) || charge.amountReceived > 0);
      if (!CHARGED.has(p.status) && !theirs) continue;
      out.push({
        invariant: this.name,
        detail: `the shopper of key ${step.key} ${step.behaviour === "fail" ? "failed" : "abandoned"} the challenge, yet ${describePayment(p)} is ${p.status}${charge ? ` and the provider's ${charge.id} ${charge.status} (received ${charge.amountReceived})` : ""}`,
      });
    }
    return out;
  },
};

/**
 * No completed 3-D Secure step lost: once the challenge answered the shopper's complete with its
 * redirect (303), the provider had authorized the payment, so our books must show it paid or
 * authorized (a manual one may since have been captured, canceled or expired through its hold),
 * whatever reloads, second tabs or the action timeout did meanwhile. One exception, the timeout's
 * own contract: a step whose completion was answered only after the deadline (the payment's
 * creation + PAYMENT_ACTION_TIMEOUT_SECONDS, on the server's clock) may have lost the race to the
 * timeout's cancel, which the provider accepts for a held payment. Then it must be canceled in our
 * books and at the provider, with nothing taken (the cancel read "requires_action" just before,
 * after the deadline, so a completion answered before the deadline is never excused).
 */
export const completedChallengesKept: Invariant = {
  name: "no completed 3-D Secure step lost",
  check(e) {
    const byId = paymentsById(e);
    const charges = chargesById(e);
    const paymentOfKey = new Map(e.books.payments.map((p) => [`${p.accountId}\n${p.key}`, p]));
    return e.journal.challenges.flatMap((step) => {
      const completions = step.pressed.filter((x) => x.action === "complete" && x.status === 303);
      if (completions.length === 0) return [];
      const p =
        (step.paymentId && byId.get(step.paymentId)) || paymentOfKey.get(`${step.accountId}\n${step.key}`);
      if (p && (CHARGED.has(p.status) || p.holds === 1)) return [];
      const charge = p && chargeOf(charges, p);
      const deadline = p ? p.createdAt + step.actionTimeoutSeconds * 1000 : Number.POSITIVE_INFINITY;
      const late = completions.every((x) => x.at > deadline);
      if (p?.status === "canceled" && charge?.status === "canceled" && charge.amountReceived === 0 && late)
        return [];
      return [
        {
          invariant: this.name,
          detail: `the shopper of key ${step.key} (${step.behaviour}${step.reissued ? ", step issued again on reload" : ""}) completed the challenge, yet ${p ? describePayment(p) : "no payment of the key"} is not paid; the last answer said ${step.finalAnswer ?? "nothing"}`,
        },
      ];
    });
  },
};
