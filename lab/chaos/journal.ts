/**
 * What the run did and what every client saw, in memory: the invariants read it at the end
 * beside the provider's books and ours. Times are this process's Date.now(); the app and the
 * database run on the same machine and clock.
 */
import type { ReceiverRecord } from "./receiver-records";

export type FaultKind = "error_before" | "reset_after_commit" | "hold" | "latency" | "down";

/** One HTTP answer (or the lack of one) a shopper got for a payment request. */
export interface PaymentAnswer {
  accountId: string;
  key: string;
  orderId: string;
  copy: number;
  instance: number;
  sentAt: number;
  answeredAt: number;
  /** null: no HTTP answer (connection refused or reset: a killed instance). */
  status: number | null;
  retryAfter: string | null;
  /** The problem type's last segment, or the payment's status on a 200. */
  reason: string | null;
  paymentId: string | null;
  providerChargeId: string | null;
  paymentStatus: string | null;
  /** The payment's amount on a 200 (integer minor units). */
  amount: number | null;
  /** An authorization's deadline on a 200 `authorized` (ISO), else null. */
  captureBefore?: string | null;
  /** Where to send the shopper on a 200 `requires_action`, else null. */
  nextActionUrl?: string | null;
}

/** One HTTP answer (or none) an operator got for a refund request (POST /api/v1/refunds). */
export interface RefundAnswer {
  key: string;
  paymentId: string;
  amountMinor: number;
  /** How the operator came to send it: one of refunders.ts's modes. */
  mode: RefundMode;
  sentAt: number;
  answeredAt: number;
  status: number | null;
  retryAfter: string | null;
  /** The problem type's last segment, or the refund's status on a 200. */
  reason: string | null;
  refundId: string | null;
}

export type RefundMode = "partial" | "full" | "concurrent" | "retry";

/** How an operator came to capture or cancel an authorization: one of authorizers.ts's modes. */
export type AuthorizationMode =
  | "capture_full"
  | "capture_partial"
  | "cancel"
  | "retry"
  | "race"
  | "at_deadline";

/** One HTTP answer (or none) an operator got for POST /api/v1/payments/{id}/capture or /cancel. */
export interface AuthorizationAnswer {
  action: "capture" | "cancel";
  key: string;
  paymentId: string;
  /** A capture's amount asked for; null: all that is held (or a cancel). */
  amountMinor: number | null;
  mode: AuthorizationMode;
  sentAt: number;
  answeredAt: number;
  status: number | null;
  retryAfter: string | null;
  /** The problem type's last segment, or the payment's status on a 200. */
  reason: string | null;
  /** A payment-not-capturable problem's `state`. */
  state: string | null;
  /** On a 200: what the answer says was captured. */
  amountCaptured: number | null;
}

/** What a 3-D Secure shopper does at the challenge page. */
export type ChallengeBehaviour = "complete" | "fail" | "abandon" | "reload" | "late";

/** One 3-D Secure shopper's step, from the shopper's side. */
export interface ChallengeStep {
  accountId: string;
  key: string;
  orderId: string;
  paymentId: string | null;
  behaviour: ChallengeBehaviour;
  captureMethod: "automatic" | "manual";
  /** The challenge page's address the payment answered (null: never answered requires_action). */
  url: string | null;
  /** The challenge form's HTTP status (303 once answered), per press; empty when not pressed. */
  pressed: { action: "complete" | "fail"; status: number | null; at: number }[];
  /** The payment's status or the problem the final retry with the key answered. */
  finalAnswer: string | null;
  /** A reload answered another challenge page than the first (the step was issued again). */
  reissued: boolean;
  /** The app's PAYMENT_ACTION_TIMEOUT_SECONDS: past it from the Pay press, the step is too late. */
  actionTimeoutSeconds: number;
}

/** How one shopper's key ended, from the shopper's side. */
export interface KeyOutcome {
  accountId: string;
  key: string;
  orderId: string;
  /** The last answer of the last copy to stop, and whether the shopper took it as final. */
  last: PaymentAnswer | null;
  gaveUp: "final_answer" | "impatient" | "deadline" | "success";
}

/** An operator's call through the admin API. */
export interface OperatorAction {
  kind: "redrive" | "reconcile" | "reconcile_narrow";
  at: number;
  status: number | null;
  detail: string;
}

/** A charge made directly at the provider, not by the app. */
export interface RogueCharge {
  chargeId: string;
  metadata: Record<string, string>;
  /** Whether the reconciler must report it: its metadata says ours (source or payment_id). */
  looksOurs: boolean;
  createdAt: number;
}

/** A merchant's endpoint the checker registered (or wrote in, for a forbidden address). */
export interface MerchantEndpoint {
  name: string;
  id: string;
  accountId: string;
  url: string;
  /** Its address is one nothing may be sent to. */
  forbidden: boolean;
}

/** An endpoint's secret from the moment it was asked for; the first is the registration's. */
export interface SecretIssued {
  endpointId: string;
  secret: string;
  /** The request that made it: it took effect between these two. */
  sentAt: number;
  answeredAt: number;
  /** The previous secrets' overlap; null for the first. */
  overlapSeconds: number | null;
  /** Requests it took: more than one, and an earlier one may have made a secret nobody saw. */
  tries: number;
}

/** The merchant disabling or deleting an endpoint: it took effect between sentAt and answeredAt. */
export interface EndpointChange {
  endpointId: string;
  kind: "disabled" | "deleted";
  sentAt: number;
  answeredAt: number;
}

/** A registration of a forbidden URL through the API, and its answer (it must be a 400). */
export interface ForbiddenRegistration {
  url: string;
  status: number | null;
  reason: string | null;
}

/** The merchants' side of the run: endpoints, secrets, changes, and what the receivers got. */
export class MerchantJournal {
  readonly endpoints: MerchantEndpoint[] = [];
  readonly secrets: SecretIssued[] = [];
  readonly changes: EndpointChange[] = [];
  readonly forbiddenRegistrations: ForbiddenRegistration[] = [];
  /** Every line the receivers wrote, read at the end. */
  records: ReceiverRecord[] = [];
  /** SIGKILLs of a deliverer (the worker, the first instance) while a request was held. */
  deliverersKilledMidDelivery = 0;
  receiverKillsMidRequest = 0;
  receiverOutages = 0;
}

export interface Interval {
  from: number;
  to: number;
}

export class Journal {
  readonly answers: PaymentAnswer[] = [];
  readonly refundAnswers: RefundAnswer[] = [];
  readonly authorizationAnswers: AuthorizationAnswer[] = [];
  readonly challenges: ChallengeStep[] = [];
  readonly keys: KeyOutcome[] = [];
  readonly operators: OperatorAction[] = [];
  readonly rogue: RogueCharge[] = [];
  /** The provider's events the app acts on, and how our records of them ended (after the settle). */
  providerEvents = { listed: 0, outcomes: new Map<string, number>() };
  readonly faults = new Map<FaultKind, number>();
  /** The faults done to each payment's charge requests, by payment id. */
  readonly faultsByPayment = new Map<string, FaultKind[]>();
  readonly kills = new Map<string, number>();
  readonly restarts = new Map<string, number>();
  /** While PostgreSQL was down or restarting: answers then may be 500s of their own kind. */
  readonly databaseOutages: Interval[] = [];
  /** While the fault proxy answered every provider call with 503 (the provider "down"). */
  readonly providerOutages: Interval[] = [];
  readonly merchants = new MerchantJournal();
  orders = 0;
  notes: string[] = [];

  recordFault(kind: FaultKind, paymentId: string | null): void {
    this.count(this.faults, kind);
    if (paymentId)
      this.faultsByPayment.set(paymentId, [...(this.faultsByPayment.get(paymentId) ?? []), kind]);
  }

  count<K>(map: Map<K, number>, key: K): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  overlaps(intervals: Interval[], from: number, to: number, slackMs = 0): boolean {
    return intervals.some((i) => i.from - slackMs <= to && from <= i.to + slackMs);
  }
}
