import { chargeOf, chargesById, describePayment, type Invariant, reported, type Violation } from "./types";

/** How long past its deadline an authorization may still be held when the books are read. */
export const EXPIRY_SLACK_MS = 30_000;

const RELEASE_OF: Record<string, string | undefined> = {
  succeeded: "hold_captured",
  canceled: "hold_voided",
};

/**
 * Every hold resolved or visibly pending: a payment's hold is booked once, released once by the
 * release its status says (captured: hold_captured, canceled: hold_voided), or still open with
 * the payment `authorized`, its deadline not long past, and the provider still holding it.
 */
export const holdsResolved: Invariant = {
  name: "every hold resolved or visibly pending",
  check(e) {
    const out: Violation[] = [];
    const charges = chargesById(e);
    const flag = (p: Parameters<typeof describePayment>[0], what: string) =>
      out.push({ invariant: this.name, detail: `${describePayment(p)} ${what}` });
    for (const p of e.books.payments) {
      const releases = p.releases.join(", ") || "none";
      if (p.holds > 1) flag(p, `has ${p.holds} holds`);
      if (p.holds === 0) {
        if (p.releases.length > 0) flag(p, `released a hold it never had (${releases})`);
        if (p.status === "authorized") flag(p, "is authorized without a hold in the ledger");
        if (p.captureMethod === "manual" && p.status === "succeeded") flag(p, "was captured without a hold");
        continue;
      }
      if (p.status === "authorized") {
        if (p.releases.length > 0) flag(p, `is authorized, yet its hold was released (${releases})`);
        const late = p.captureBefore === null ? null : e.books.readAt - p.captureBefore;
        if (late === null || late > EXPIRY_SLACK_MS)
          flag(
            p,
            `is still held ${late === null ? "with no deadline" : `${Math.round(late / 1000)} s past its deadline`}`,
          );
        const charge = chargeOf(charges, p);
        const holds = charge?.status === "authorized" && charge.amountCapturable === p.amountMinor;
        if (!holds && !reported(e.books.reportAfterDrain, (m) => m.paymentId === p.id))
          flag(
            p,
            `holds ${p.amountMinor} in our books; the provider's ${p.providerChargeId ?? "payment"} is ${charge ? `${charge.status} (capturable ${charge.amountCapturable})` : "missing"}, and no report names it`,
          );
        continue;
      }
      const expected = RELEASE_OF[p.status];
      if (p.releases.length !== 1 || p.releases[0] !== expected)
        flag(
          p,
          `had a hold, and its releases are ${releases} (expected ${expected ?? "none: not a status a hold ends in"})`,
        );
    }
    return out;
  },
};
