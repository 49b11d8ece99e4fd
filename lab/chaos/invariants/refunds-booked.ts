import type { Invariant, Violation } from "./types";

/** Every refund the provider made is booked exactly once: its refund succeeded with one reversal. */
export const providerRefundsBooked: Invariant = {
  name: "every provider refund booked exactly once",
  check(e) {
    const ours = new Map(e.books.refunds.map((r) => [r.id, r]));
    const perRefund = new Map<string, string[]>();
    const violations: Violation[] = [];
    for (const pr of e.books.providerRefunds) {
      const refundId = pr.metadata.refund_id ?? "";
      perRefund.set(refundId, [...(perRefund.get(refundId) ?? []), pr.id]);
      const r = ours.get(refundId);
      if (r?.status === "succeeded" && r.providerRefundId === pr.id && r.reversals === 1) continue;
      violations.push({
        invariant: this.name,
        detail: `provider refund ${pr.id} (${pr.amount} of charge ${pr.charge}) is not booked: ${
          r
            ? `refund ${r.id} is ${r.status}${r.failureCode ? ` (${r.failureCode})` : ""}, provider refund ${r.providerRefundId ?? "none"}, ${r.reversals} reversals`
            : `no refund of ours named ${refundId || "(no refund_id)"}`
        }`,
      });
    }
    for (const [refundId, ids] of perRefund)
      if (ids.length > 1)
        violations.push({
          invariant: this.name,
          detail: `refund ${refundId} was made ${ids.length} times at the provider: ${ids.join(", ")}`,
        });
    return violations;
  },
};

/** No refund booked (succeeded, or with a reversal) without the provider's refund of that amount. */
export const noRefundBookedWithoutProvider: Invariant = {
  name: "no refund booked without a provider refund",
  check(e) {
    const provider = new Map(e.books.providerRefunds.map((r) => [r.id, r]));
    return e.books.refunds
      .filter((r) => r.status === "succeeded" || r.reversals > 0)
      .flatMap((r) => {
        const pr = r.providerRefundId ? provider.get(r.providerRefundId) : undefined;
        const fine =
          r.status === "succeeded" &&
          r.reversals === 1 &&
          pr !== undefined &&
          pr.amount === r.amountMinor &&
          pr.charge === r.providerChargeId &&
          pr.metadata.refund_id === r.id;
        if (fine) return [];
        return [
          {
            invariant: this.name,
            detail: `refund ${r.id} (${r.status}, ${r.amountMinor}, ${r.reversals} reversals) has ${
              pr ? `provider refund ${pr.id} of ${pr.amount} on charge ${pr.charge}` : "no provider refund"
            }`,
          },
        ];
      });
  },
};

/** Every 200 an operator saw for a refund names a refund of that amount, succeeded and booked. */
export const refundAnswersBooked: Invariant = {
  name: "every refund 200 booked",
  check(e) {
    const ours = new Map(e.books.refunds.map((r) => [r.id, r]));
    return e.journal.refundAnswers
      .filter((a) => a.status === 200)
      .flatMap((a) => {
        const r = a.refundId ? ours.get(a.refundId) : undefined;
        if (r?.status === "succeeded" && r.reversals === 1 && r.amountMinor === a.amountMinor) return [];
        return [
          {
            invariant: this.name,
            detail: `key ${a.key} was answered 200 with refund ${a.refundId ?? "(no id)"}, which is ${r ? `${r.status} with ${r.reversals} reversals` : "not in our books"}`,
          },
        ];
      });
  },
};
