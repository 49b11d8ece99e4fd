import { describe, expect, it } from "vitest";
import type { Charge, Refund } from "../../../server/provider";
import type { Books, OurRefund } from "../books";
import { Journal, type RefundAnswer } from "../journal";
import { evidenceOf, providerPayment } from "./fixtures";
import { providerEventsApplied } from "./provider-events";
import { noRefundBookedWithoutProvider, providerRefundsBooked, refundAnswersBooked } from "./refunds-booked";
import { refundsWithinCapture } from "./refunds-within-capture";
import type { Evidence } from "./types";

const charge: Charge = providerPayment({
  id: "ch_1",
  createdAt: "2026-12-03T00:00:00.000Z",
  metadata: { payment_id: "p1" },
});
const providerRefund = (id: string, refundId: string, amount: number): Refund => ({
  id,
  charge: "ch_1",
  amount,
  currency: "eur",
  status: "succeeded",
  createdAt: "2026-12-03T00:00:01.000Z",
  metadata: { refund_id: refundId, payment_id: "p1" },
});
const ours = (id: string, amountMinor: number, more: Partial<OurRefund> = {}): OurRefund => ({
  id,
  paymentId: "p1",
  amountMinor,
  status: "succeeded",
  failureCode: null,
  providerRefundId: `re_${id}`,
  captured: 1000,
  providerChargeId: "ch_1",
  reversals: 1,
  ...more,
});

function evidence(books: Partial<Books>, answers: Partial<RefundAnswer>[] = []): Evidence {
  const journal = new Journal();
  for (const a of answers) journal.refundAnswers.push(a as RefundAnswer);
  return evidenceOf({ charges: [charge], ...books }, journal);
}

describe("the refund invariants", () => {
  it("hold for refunds within the capture, each booked once with its provider refund", () => {
    const e = evidence(
      {
        refunds: [
          ours("r1", 400),
          ours("r2", 600),
          ours("r3", 100, { status: "failed", providerRefundId: null, reversals: 0 }),
        ],
        providerRefunds: [providerRefund("re_r1", "r1", 400), providerRefund("re_r2", "r2", 600)],
      },
      [{ status: 200, refundId: "r1", amountMinor: 400, key: "k1" }],
    );
    for (const i of [
      refundsWithinCapture,
      providerRefundsBooked,
      noRefundBookedWithoutProvider,
      refundAnswersBooked,
    ])
      expect(i.check(e), i.name).toEqual([]);
  });

  it("see more refunded than captured, at the provider and in the books", () => {
    const e = evidence({
      refunds: [
        ours("r1", 700),
        ours("r2", 400, { status: "pending", providerRefundId: null, reversals: 0 }),
      ],
      providerRefunds: [providerRefund("re_r1", "r1", 700), providerRefund("re_x", "r9", 400)],
    });
    expect(refundsWithinCapture.check(e).map((v) => v.detail)).toEqual([
      expect.stringContaining("refunded 1100 of charge ch_1"),
      expect.stringContaining("total 1100 of 1000 captured"),
    ]);
  });

  it("see a provider refund not booked, or made twice for one refund", () => {
    const e = evidence({
      refunds: [
        ours("r1", 300, { status: "pending", providerRefundId: null, reversals: 0 }),
        ours("r2", 200),
      ],
      providerRefunds: [
        providerRefund("re_a", "r1", 300),
        providerRefund("re_r2", "r2", 200),
        providerRefund("re_b", "r2", 200),
      ],
    });
    const details = providerRefundsBooked.check(e).map((v) => v.detail);
    expect(details).toHaveLength(3);
    expect(details.join("\n")).toContain("refund r1 is pending");
    expect(details.join("\n")).toContain("refund r2 was made 2 times");
  });

  it("see a refund booked without the provider's refund, or booked twice, and a 200 never booked", () => {
    const e = evidence(
      {
        refunds: [ours("r1", 300), ours("r2", 200, { reversals: 2 })],
        providerRefunds: [providerRefund("re_r2", "r2", 200)],
      },
      [{ status: 200, refundId: "r3", amountMinor: 50, key: "k3" }],
    );
    expect(noRefundBookedWithoutProvider.check(e).map((v) => v.detail)).toEqual([
      expect.stringContaining("refund r1 (succeeded, 300, 1 reversals) has no provider refund"),
      expect.stringContaining("refund r2 (succeeded, 200, 2 reversals)"),
    ]);
    expect(refundAnswersBooked.check(e)).toHaveLength(1);
  });
});

describe("every provider event recorded, none contradicting the books", () => {
  const event = {
    id: "evt_1",
    type: "payment_intent.succeeded",
    objectId: "pi_1",
    paymentId: "p1",
    refundId: null,
  };
  it("is broken by an event never recorded, or recorded as a mismatch", () => {
    expect(providerEventsApplied.check(evidence({ theirEvents: [event] }))).toHaveLength(1);
    const mismatch = evidence({
      theirEvents: [event],
      ourEvents: [{ id: "evt_1", outcome: "mismatch", detail: "x" }],
    });
    expect(providerEventsApplied.check(mismatch)).toHaveLength(1);
  });
  it("holds for an event applied, or a rogue charge's contradicting one", () => {
    const applied = evidence({
      theirEvents: [event],
      ourEvents: [{ id: "evt_1", outcome: "applied", detail: null }],
    });
    expect(providerEventsApplied.check(applied)).toEqual([]);
    const rogue = {
      ...evidence({ theirEvents: [event], ourEvents: [{ id: "evt_1", outcome: "mismatch", detail: "x" }] }),
      rogueIds: new Set(["pi_1"]),
    };
    expect(providerEventsApplied.check(rogue)).toEqual([]);
  });
});
