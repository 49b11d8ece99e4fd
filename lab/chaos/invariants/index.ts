import { answersBooked } from "./answers-booked";
import { answersInKind } from "./answers-in-kind";
import { authorizationAnswersBooked } from "./authorization-answers-booked";
import { capturesWithinAuthorized } from "./captures-within-authorized";
import { chargedOnlyAfterChallenge, completedChallengesKept } from "./challenge-completed";
import { chargesBooked } from "./charges-booked";
import { holdsBalanced } from "./holds-balanced";
import { holdsResolved } from "./holds-resolved";
import { ledgerBalanced } from "./ledger-balanced";
import { noCaptureAfterVoid } from "./no-capture-after-void";
import { noChargeAfterRefusal } from "./no-charge-after-refusal";
import { nothingChargedIsTrue } from "./nothing-charged";
import { oneChargePerOrder } from "./one-charge-per-order";
import { providerEventsApplied } from "./provider-events";
import { noRefundBookedWithoutProvider, providerRefundsBooked, refundAnswersBooked } from "./refunds-booked";
import { refundsWithinCapture } from "./refunds-within-capture";
import { rogueReported } from "./rogue-reported";
import { paymentsStartedByAttempts } from "./started-by-an-attempt";
import type { Invariant } from "./types";
import { unfinishedVisible } from "./unfinished-visible";
import { webhooksDelivered } from "./webhooks-delivered";
import { webhooksNotAfterDisable } from "./webhooks-not-after-disable";
import { webhooksNotForbidden } from "./webhooks-not-forbidden";
import { webhooksSigned } from "./webhooks-signed";

export type { Evidence, Invariant, Violation } from "./types";

/** Every check the checker makes at the end of a run; a new seam adds its module here. */
export const INVARIANTS: Invariant[] = [
  oneChargePerOrder,
  chargesBooked,
  noChargeAfterRefusal,
  nothingChargedIsTrue,
  answersBooked,
  ledgerBalanced,
  unfinishedVisible,
  rogueReported,
  paymentsStartedByAttempts,
  answersInKind,
  refundsWithinCapture,
  providerRefundsBooked,
  noRefundBookedWithoutProvider,
  refundAnswersBooked,
  providerEventsApplied,
  capturesWithinAuthorized,
  noCaptureAfterVoid,
  holdsResolved,
  holdsBalanced,
  chargedOnlyAfterChallenge,
  completedChallengesKept,
  authorizationAnswersBooked,
  webhooksDelivered,
  webhooksSigned,
  webhooksNotAfterDisable,
  webhooksNotForbidden,
];
