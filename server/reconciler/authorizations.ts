import type { AuthorizationAction, LedgerEntry, Payment } from "../generated/prisma/client";
import type { Charge } from "../provider";

export const AUTHORIZATION_MISMATCH_KINDS = [
  /** The provider captured; our payment is still authorized and no capture of ours is in flight. */
  "capture_without_postings",
  /** The provider released the hold (canceled, expired); our payment is still authorized. */
  "hold_released_at_provider",
  /** Our payment is authorized, and the provider holds another amount than our books do. */
  "hold_amount_mismatch",
  /** Both captured, for different amounts (the provider's amount_received, our captured_minor). */
  "captured_amount_mismatch",
  /** Our payment is canceled (voided or expired); the provider captured it. */
  "captured_after_cancel",
  /** Our payment is canceled; the provider still holds the amount on the card. */
  "hold_open_at_provider",
] as const;
export type AuthorizationMismatchKind = (typeof AUTHORIZATION_MISMATCH_KINDS)[number];

/** A payment with its ledger entries and its capture or cancel still in flight (pending), if any. */
export type PaymentWithEntries = Payment & {
  ledgerEntries: LedgerEntry[];
  authorizationActions: Pick<AuthorizationAction, "kind">[];
};

export interface AuthorizationMismatch {
  kind: AuthorizationMismatchKind;
  paymentId: string;
  chargeId: string;
  detail: string;
}

/** What our books hold for a payment now: its hold's clearing leg less its release's. */
export function heldMinor(payment: PaymentWithEntries): number {
  return payment.ledgerEntries
    .filter((e) => e.pending && (e.entryType === "hold_clearing" || e.entryType === "release_clearing"))
    .reduce((sum, e) => sum + Number(e.amountMinor), 0);
}

/** Whether the authorization checks decide this payment (a manual one, authorized or canceled). */
export function isAuthorizationState(payment: Payment): boolean {
  return (
    payment.captureMethod === "manual" && (payment.status === "authorized" || payment.status === "canceled")
  );
}

/**
 * A manual-capture payment that is authorized or canceled in our books, against the provider's
 * copy. What our own action in flight will settle is not a mismatch: a capture or cancel still
 * pending, or an expiry past its deadline by less than the grace the completer needs.
 */
export function checkAuthorization(
  charge: Charge,
  payment: PaymentWithEntries,
  now: { ms: number; expiryCutoffMs: number },
): AuthorizationMismatch | null {
  const money = (n: number) => `${n} ${charge.currency.toUpperCase()}`;
  const found = (kind: AuthorizationMismatchKind, detail: string): AuthorizationMismatch => ({
    kind,
    paymentId: payment.id,
    chargeId: charge.id,
    detail,
  });
  const inFlight = (kind: "capture" | "cancel") => payment.authorizationActions.some((a) => a.kind === kind);
  const held = heldMinor(payment);

  if (payment.status === "canceled") {
    if (charge.status === "succeeded")
      return found(
        "captured_after_cancel",
        `the provider captured ${money(charge.amountReceived)}; our payment is ${payment.failureCode ?? "canceled"}`,
      );
    if (charge.status === "authorized")
      return found(
        "hold_open_at_provider",
        `the provider still holds ${money(charge.amountCapturable)}; our payment is ${payment.failureCode ?? "canceled"}`,
      );
    return null;
  }

  switch (charge.status) {
    case "succeeded":
      return inFlight("capture")
        ? null
        : found(
            "capture_without_postings",
            `the provider captured ${money(charge.amountReceived)} of ${money(charge.amount)}; our payment is still authorized, holding ${held}`,
          );
    case "canceled":
    case "declined": {
      const deadline = payment.captureBefore?.getTime() ?? Number.POSITIVE_INFINITY;
      const expiryDue = deadline <= now.ms && deadline > now.expiryCutoffMs;
      if (inFlight("cancel") || expiryDue) return null;
      return found(
        "hold_released_at_provider",
        `the provider's payment is ${charge.status}${charge.cancellationReason ? ` (${charge.cancellationReason})` : ""}; our books still hold ${money(held)}`,
      );
    }
    case "authorized":
      return charge.amountCapturable === held
        ? null
        : found(
            "hold_amount_mismatch",
            `the provider holds ${money(charge.amountCapturable)}, our books ${money(held)}`,
          );
    default:
      return null;
  }
}

/** A captured manual payment: what the provider took against our captured_minor. */
export function checkCapturedAmount(charge: Charge, payment: Payment): AuthorizationMismatch | null {
  if (payment.captureMethod !== "manual" || payment.status !== "succeeded" || charge.status !== "succeeded")
    return null;
  if (payment.capturedMinor === charge.amountReceived) return null;
  return {
    kind: "captured_amount_mismatch",
    paymentId: payment.id,
    chargeId: charge.id,
    detail: `the provider captured ${charge.amountReceived}, our books ${payment.capturedMinor ?? "nothing"} (${charge.currency.toUpperCase()})`,
  };
}
