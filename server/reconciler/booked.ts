import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { Charge, PaymentProvider } from "../provider";
import { type CheckTimes, checkBooking, type Mismatch, type PaymentWithEntries } from "./checks";

/** What the checks read of a payment: its entries, and its capture or cancel in flight. */
export const PAYMENT_INCLUDE = {
  ledgerEntries: true,
  authorizationActions: { where: { status: "pending" }, select: { kind: true } },
} as const satisfies Prisma.PaymentInclude;

type Deps = { prisma: Db; provider: PaymentProvider };

/** Booked payments (postings or a hold) whose charge the listing did not show: asked for directly. */
export async function checkBookings(
  deps: Deps,
  payments: PaymentWithEntries[],
  charges: Map<string, Charge>,
  times: CheckTimes,
) {
  const found: Mismatch[] = [];
  for (const payment of payments) {
    if (payment.ledgerEntries.length === 0) continue;
    if (payment.providerChargeId && charges.has(payment.providerChargeId)) continue;
    const charge = payment.providerChargeId ? await deps.provider.getCharge(payment.providerChargeId) : null;
    const mismatch = checkBooking(payment, charge, times);
    if (mismatch) found.push(...(await confirmed(deps, mismatch, new Map([[payment.id, payment]]), times)));
  }
  return found;
}

/**
 * A manual payment's mismatch, looked at again before it is reported: its charge asked for anew,
 * then our payment read again. A capture or cancel of ours that moved either side between the two
 * first reads shows as our payment changed (skipped: the next run decides) or as our action in
 * flight; only a disagreement that outlasts our own reads is reported.
 */
export async function confirmed(
  deps: Deps,
  found: Mismatch,
  byId: Map<string, PaymentWithEntries>,
  times: CheckTimes,
): Promise<Mismatch[]> {
  const first = found.paymentId ? byId.get(found.paymentId) : undefined;
  if (
    first?.captureMethod !== "manual" ||
    !found.chargeId ||
    found.chargeId !== first.providerChargeId ||
    found.bookedChargeId
  )
    return [found];
  const charge = await deps.provider.getCharge(found.chargeId);
  const again = await deps.prisma.payment.findUnique({ where: { id: first.id }, include: PAYMENT_INCLUDE });
  const unchanged =
    again !== null &&
    again.updatedAt.getTime() === first.updatedAt.getTime() &&
    again.authorizationActions.length === first.authorizationActions.length;
  if (!unchanged) return [];
  const still = checkBooking(again, charge, times);
  return still ? [still] : [];
}
