/**
 * What the run did and what every client saw, in memory: the invariants read it at the end
 * beside the provider's books and ours. Times are this process's Date.now(); the app and the
 * database run on the same machine and clock.
 */

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

export interface Interval {
  from: number;
  to: number;
}

export class Journal {
  readonly answers: PaymentAnswer[] = [];
  readonly refundAnswers: RefundAnswer[] = [];
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
