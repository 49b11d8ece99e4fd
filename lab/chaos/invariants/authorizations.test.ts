import { describe, expect, it } from "vitest";
import type { OurAction, OurPayment } from "../books";
import { type AuthorizationAnswer, type ChallengeStep, Journal } from "../journal";
import { answersInKind } from "./answers-in-kind";
import { authorizationAnswersBooked } from "./authorization-answers-booked";
import { capturesWithinAuthorized } from "./captures-within-authorized";
import { chargedOnlyAfterChallenge, completedChallengesKept } from "./challenge-completed";
import { evidenceOf, ourPayment, providerPayment } from "./fixtures";
import { holdsBalanced } from "./holds-balanced";
import { EXPIRY_SLACK_MS, holdsResolved } from "./holds-resolved";
import { noCaptureAfterVoid } from "./no-capture-after-void";

const READ_AT = Date.parse("2026-12-05T00:10:00.000Z");

/** A manual payment of 1000 whose hold is booked: authorized, deadline ahead. */
const held = {
  captureMethod: "manual",
  status: "authorized",
  capturedMinor: null,
  captureBefore: READ_AT + 10_000,
  postedMinor: 0,
  clearingEntries: 0,
  holds: 1,
  heldMinor: 1000,
} satisfies Partial<OurPayment>;
/** The same payment captured for 600: the hold released as captured, 600 posted. */
const captured = {
  ...held,
  status: "succeeded",
  capturedMinor: 600,
  captureBefore: null,
  postedMinor: 600,
  clearingEntries: 1,
  releases: ["hold_captured"],
  releasedMinor: 1000,
} satisfies Partial<OurPayment>;
const canceled = {
  ...held,
  status: "canceled",
  failureCode: "expired",
  captureBefore: null,
  releases: ["hold_voided"],
  releasedMinor: 1000,
} satisfies Partial<OurPayment>;
const capturedThere = providerPayment({ amountReceived: 600 });
const holdingThere = providerPayment({ status: "authorized", amountCapturable: 1000, amountReceived: 0 });
const canceledThere = providerPayment({
  status: "canceled",
  amountReceived: 0,
  cancellationReason: "abandoned",
});
const action = (id: string, kind: string, status = "succeeded"): OurAction => ({
  id,
  paymentId: "p1",
  kind,
  status,
  reason: "operator",
  amountMinor: null,
});
const details = (vs: { detail: string }[]) => vs.map((v) => v.detail).join("\n");

describe("captured ≤ authorized, each capture the provider's amount", () => {
  it("holds for a partial capture booked as the provider took it", () => {
    const e = evidenceOf({ payments: [ourPayment(captured)], charges: [capturedThere] });
    expect(capturesWithinAuthorized.check(e)).toEqual([]);
  });
  it("sees more captured than authorized, and a capture the provider took another amount of", () => {
    const e = evidenceOf({
      payments: [ourPayment({ ...captured, capturedMinor: 1200, postedMinor: 1200 })],
      charges: [providerPayment({ amountReceived: 1100 })],
    });
    const found = details(capturesWithinAuthorized.check(e));
    expect(found).toContain("the provider took 1100 of payment pi_1, authorized for 1000");
    expect(found).toContain("captured 1200 of 1000 authorized");
    expect(found).toContain(
      "booked a capture of 1200 (posted 1200); the provider says succeeded, received 1100",
    );
  });
});

describe("no capture after a cancel or expiry", () => {
  it("holds for a canceled payment the provider canceled, one action succeeded", () => {
    const e = evidenceOf({
      payments: [ourPayment(canceled)],
      charges: [canceledThere],
      actions: [action("c1", "cancel"), action("c2", "capture", "failed")],
    });
    expect(noCaptureAfterVoid.check(e)).toEqual([]);
  });
  it("sees a capture booked after a void, a payment the provider canceled booked captured, two winners", () => {
    const e = evidenceOf({
      payments: [ourPayment({ ...captured, releases: ["hold_voided"] })],
      charges: [canceledThere],
      actions: [action("c1", "cancel"), action("c2", "capture")],
    });
    const found = details(noCaptureAfterVoid.check(e));
    expect(found).toContain("its hold was voided, yet it is succeeded with 600 posted");
    expect(found).toContain("is booked as captured (600 posted), but the provider canceled pi_1");
    expect(found).toContain("payment p1 has 2 succeeded captures or cancels: cancel c1, capture c2");
  });
  it("sees a payment canceled in our books that the provider captured", () => {
    const e = evidenceOf({ payments: [ourPayment(canceled)], charges: [capturedThere] });
    expect(details(noCaptureAfterVoid.check(e))).toContain(
      "the provider's pi_1 is succeeded with 600 received",
    );
  });
});

describe("every hold resolved or visibly pending", () => {
  it("holds for an open hold before its deadline, a captured and a voided one", () => {
    for (const [payment, there] of [
      [held, holdingThere],
      [captured, capturedThere],
      [canceled, canceledThere],
    ] as const) {
      const e = evidenceOf({ payments: [ourPayment(payment)], charges: [there], readAt: READ_AT });
      expect(holdsResolved.check(e), payment.status).toEqual([]);
    }
  });
  it("sees a hold long past its deadline, one the provider released, and a release that does not fit", () => {
    const late = evidenceOf({
      payments: [ourPayment({ ...held, captureBefore: READ_AT - EXPIRY_SLACK_MS - 5000 })],
      charges: [canceledThere],
      readAt: READ_AT,
    });
    const found = details(holdsResolved.check(late));
    expect(found).toContain("is still held 35 s past its deadline");
    expect(found).toContain("the provider's pi_1 is canceled (capturable 0), and no report names it");
    const wrong = evidenceOf({
      payments: [ourPayment({ ...captured, releases: ["hold_voided"] })],
      charges: [capturedThere],
    });
    expect(details(holdsResolved.check(wrong))).toContain(
      "its releases are hold_voided (expected hold_captured)",
    );
    const twice = evidenceOf({ payments: [ourPayment({ ...captured, holds: 2 })] });
    expect(details(holdsResolved.check(twice))).toContain("has 2 holds");
  });
  it("lets the reconciler's report make a released hold visible", () => {
    const e = evidenceOf({
      payments: [ourPayment(held)],
      charges: [canceledThere],
      readAt: READ_AT,
      reportAfterDrain: {
        providerError: null,
        mismatches: [{ paymentId: "p1" } as never],
      },
    });
    expect(holdsResolved.check(e)).toEqual([]);
  });
});

describe("the ledger's holds balance", () => {
  it("holds when the release returns the hold", () => {
    const e = evidenceOf({ payments: [ourPayment(held), ourPayment({ ...captured, id: "p2" })] });
    expect(holdsBalanced.check(e)).toEqual([]);
  });
  it("sees a release of another amount, a hold of another amount, and two releases", () => {
    const e = evidenceOf({
      payments: [
        ourPayment({ ...captured, releasedMinor: 600 }),
        ourPayment({ ...held, id: "p2", heldMinor: 900 }),
        ourPayment({
          ...canceled,
          id: "p3",
          releases: ["hold_voided", "hold_captured"],
          releasedMinor: 2000,
        }),
      ],
    });
    expect(holdsBalanced.check(e).map((v) => v.detail)).toEqual([
      expect.stringContaining("held 1000 in 1 holds, released 600 in 1 releases"),
      expect.stringContaining("held 900 in 1 holds, released 0 in 0 releases"),
      expect.stringContaining("released 2000 in 2 releases"),
    ]);
  });
});

describe("no 3-D Secure payment charged without the shopper's completion", () => {
  const threeDs = { paymentMethod: "pm_card_authenticationRequired" };
  const step = (more: Partial<ChallengeStep>): ChallengeStep => ({
    accountId: "a1",
    key: "k1",
    orderId: "o1",
    paymentId: "p1",
    behaviour: "complete",
    captureMethod: "automatic",
    url: "http://provider/3d_secure/x",
    pressed: [{ action: "complete", status: 303, at: 0 }],
    finalAnswer: "succeeded",
    reissued: false,
    actionTimeoutSeconds: 15,
    ...more,
  });
  it("holds for a completed challenge, and for an abandoned one canceled everywhere", () => {
    const done = new Journal();
    done.challenges.push(step({}));
    const e = evidenceOf(
      {
        payments: [ourPayment(threeDs)],
        charges: [providerPayment(threeDs)],
        challenges: [{ paymentIntent: "pi_1", outcome: "succeeded" }],
      },
      done,
    );
    expect(chargedOnlyAfterChallenge.check(e)).toEqual([]);
    const left = new Journal();
    left.challenges.push(step({ behaviour: "abandon", pressed: [] }));
    const abandoned = evidenceOf(
      {
        payments: [ourPayment({ ...threeDs, status: "canceled", postedMinor: 0, clearingEntries: 0 })],
        charges: [{ ...canceledThere, ...threeDs }],
        challenges: [{ paymentIntent: "pi_1", outcome: null }],
      },
      left,
    );
    expect(chargedOnlyAfterChallenge.check(abandoned)).toEqual([]);
  });
  it("sees a payment charged whose challenge was never completed, and an abandoned shopper charged", () => {
    const left = new Journal();
    left.challenges.push(step({ behaviour: "abandon", pressed: [] }));
    const e = evidenceOf(
      {
        payments: [ourPayment({ ...threeDs, ...held })],
        charges: [{ ...holdingThere, ...threeDs }],
        challenges: [{ paymentIntent: "pi_1", outcome: null }],
      },
      left,
    );
    const found = details(chargedOnlyAfterChallenge.check(e));
    expect(found).toContain("the provider's pi_1 (pm_card_authenticationRequired, authorized, received 0)");
    expect(found).toContain("is booked authorized, but the provider's pi_1 has no completed challenge");
    expect(found).toContain("the shopper of key k1 abandoned the challenge, yet payment p1");
  });
});

describe("no completed 3-D Secure step lost", () => {
  const completed = (paymentId: string): ChallengeStep => ({
    accountId: "a1",
    key: "k1",
    orderId: "o1",
    paymentId,
    behaviour: "reload",
    captureMethod: "manual",
    url: "http://provider/3d_secure/x",
    pressed: [{ action: "complete", status: 303, at: 0 }],
    finalAnswer: "authorized",
    reissued: true,
    actionTimeoutSeconds: 15,
  });
  it("holds for a completed step paid, or authorized and since expired through its hold", () => {
    const j = new Journal();
    j.challenges.push(completed("p1"), completed("p2"));
    const e = evidenceOf({ payments: [ourPayment(), ourPayment({ ...canceled, id: "p2" })] }, j);
    expect(completedChallengesKept.check(e)).toEqual([]);
  });
  it("sees a completed step whose payment ended canceled without a hold", () => {
    const j = new Journal();
    j.challenges.push(completed("p1"));
    const e = evidenceOf({ payments: [ourPayment({ status: "canceled", postedMinor: 0 })] }, j);
    expect(details(completedChallengesKept.check(e))).toContain(
      "the shopper of key k1 (reload, step issued again on reload) completed the challenge, yet payment p1",
    );
  });
  // The timeout's cancel read "requires_action" after the deadline and then won the race to the
  // provider: the shopper's completion, answered after the deadline, is canceled with nothing taken.
  const created = Date.parse("2026-12-05T00:00:00.000Z");
  const lostRace = (answeredAt: number) => {
    const j = new Journal();
    j.challenges.push({ ...completed("p1"), pressed: [{ action: "complete", status: 303, at: answeredAt }] });
    const voided = providerPayment({
      status: "canceled",
      amountReceived: 0,
      cancellationReason: "abandoned",
    });
    return evidenceOf(
      { payments: [ourPayment({ status: "canceled", postedMinor: 0 })], charges: [voided] },
      j,
    );
  };
  it("excuses a completion answered after the action deadline, canceled with nothing taken", () => {
    expect(completedChallengesKept.check(lostRace(created + 15_001))).toEqual([]);
  });
  it("does not excuse a completion answered before the deadline", () => {
    expect(details(completedChallengesKept.check(lostRace(created + 14_999)))).toContain(
      "the shopper of key k1 (reload, step issued again on reload) completed the challenge, yet payment p1",
    );
  });
});

describe("every 200 to an operator's capture or cancel matches the books", () => {
  const answer = (more: Partial<AuthorizationAnswer>): AuthorizationAnswer => ({
    action: "capture",
    key: "op1",
    paymentId: "p1",
    amountMinor: 600,
    mode: "capture_partial",
    sentAt: 0,
    answeredAt: 0,
    status: 200,
    retryAfter: null,
    reason: "succeeded",
    state: null,
    amountCaptured: 600,
    ...more,
  });
  const journalOf = (...answers: AuthorizationAnswer[]) => {
    const j = new Journal();
    j.authorizationAnswers.push(...answers);
    return j;
  };
  it("holds for a capture's 200 as booked, and a loser's 409", () => {
    const e = evidenceOf(
      { payments: [ourPayment(captured)], charges: [capturedThere] },
      journalOf(
        answer({}),
        answer({ action: "cancel", key: "op2", status: 409, reason: "payment-not-capturable" }),
      ),
    );
    expect(authorizationAnswersBooked.check(e)).toEqual([]);
  });
  it("sees a capture answered 500 away from a database restart, or 503 without Retry-After", () => {
    const j = journalOf(
      answer({ status: 500, reason: "internal", sentAt: 1000, answeredAt: 2000 }),
      answer({ key: "op2", status: 503, reason: "provider-unavailable", retryAfter: null }),
    );
    expect(details(answersInKind.check(evidenceOf({}, j)))).toBe(
      "capture of payment p1 (key op1) answered 500 with no database restart near it\ncapture of payment p1 (key op2) answered 503 without Retry-After",
    );
    j.databaseOutages.push({ from: 1500, to: 1600 });
    j.authorizationAnswers.splice(1, 1);
    expect(answersInKind.check(evidenceOf({}, j))).toEqual([]);
  });
  it("sees a 200 the books contradict, and two presses each told they won", () => {
    const e = evidenceOf(
      { payments: [ourPayment(captured)], charges: [capturedThere] },
      journalOf(
        answer({ amountMinor: null, amountCaptured: 1000 }),
        answer({ action: "cancel", key: "op2" }),
      ),
    );
    const found = details(authorizationAnswersBooked.check(e));
    expect(found).toContain("capture key op1 (capture_partial) was answered 200 capturing 1000");
    expect(found).toContain("cancel key op2 (capture_partial, 600) was answered 200 for payment p1");
    expect(found).toContain("payment p1: 2 presses were each told they won");
  });
});
