import { chargeOf, chargesById, type Invariant, paymentsById, type Violation } from "./types";

/**
 * Every 200 an operator saw for a capture or a cancel matches the books: a capture's payment
 * succeeded with what the answer says was captured (what was asked, or all), as the provider took
 * it; a cancel's payment canceled, at the provider too; and only one key's press won per payment.
 */
export const authorizationAnswersBooked: Invariant = {
  name: "every 200 to an operator's capture or cancel matches the books",
  check(e) {
    const out: Violation[] = [];
    const payments = paymentsById(e);
    const charges = chargesById(e);
    const winners = new Map<string, Set<string>>();
    for (const a of e.journal.authorizationAnswers) {
      if (a.status !== 200) continue;
      winners.set(a.paymentId, (winners.get(a.paymentId) ?? new Set()).add(`${a.action} ${a.key}`));
      const p = payments.get(a.paymentId);
      const charge = p && chargeOf(charges, p);
      const theirs = charge ? `${charge.status}, received ${charge.amountReceived}` : "no provider payment";
      const ours = p ? `${p.status}, captured ${p.capturedMinor ?? "none"}` : "no such payment";
      let fine: boolean;
      if (a.action === "capture") {
        const asked = a.amountMinor ?? p?.amountMinor;
        fine =
          p?.status === "succeeded" &&
          a.amountCaptured === asked &&
          p.capturedMinor === a.amountCaptured &&
          charge?.status === "succeeded" &&
          charge.amountReceived === a.amountCaptured;
      } else {
        fine = p?.status === "canceled" && charge?.status === "canceled";
      }
      if (!fine)
        out.push({
          invariant: this.name,
          detail: `${a.action} key ${a.key} (${a.mode}${a.amountMinor === null ? "" : `, ${a.amountMinor}`}) was answered 200${a.action === "capture" ? ` capturing ${a.amountCaptured}` : ""} for payment ${a.paymentId}; the books say ${ours}, the provider ${theirs}`,
        });
    }
    for (const [paymentId, keys] of winners)
      if (keys.size > 1)
        out.push({
          invariant: this.name,
          detail: `payment ${paymentId}: ${keys.size} presses were each told they won (${[...keys].join("; ")})`,
        });
    return out;
  },
};
