import type { Db } from "../db";
import type { PaymentProvider, Refund } from "../provider";

export const REFUND_MISMATCH_KINDS = [
  "refund_without_postings",
  "postings_without_refund",
  "refund_amount_mismatch",
  "refund_beyond_charge",
] as const;
export type RefundMismatchKind = (typeof REFUND_MISMATCH_KINDS)[number];

/**
 * A refund mismatch in the reconciler's shape: `paymentId` our payment, `chargeId` the item the
 * finding is about (the provider's refund, or for refund_beyond_charge the provider's charge), so
 * that two refunds of one payment are two open items.
 */
export interface RefundMismatch {
  kind: RefundMismatchKind;
  paymentId: string | null;
  chargeId: string | null;
  detail: string;
}

interface OurRefund {
  id: string;
  payment_id: string;
  provider_charge_id: string;
  captured: number;
  currency: string;
  status: string;
  provider_refund_id: string | null;
  provider_key: string;
  reversed: bigint | null;
}

/**
 * The provider's refunds against our books (decision 0051's open mismatches, for refunds): a
 * refund at the provider without a booked reversal (past the grace the completer needs to book
 * it), a booked reversal the provider does not have, amounts that differ, and refunds beyond
 * their charge, at the provider or in the books. The provider is listed over the window; the
 * payments named by open refund mismatches are listed again whatever their age.
 */
export async function checkRefunds(
  deps: { prisma: Db; provider: Pick<PaymentProvider, "listRefunds"> },
  opts: {
    windowStart: Date;
    bookingCutoffMs: number;
    carriedPaymentIds: string[];
    providerReachable: boolean;
  },
): Promise<RefundMismatch[]> {
  const found: RefundMismatch[] = [];
  const ours = await deps.prisma.$queryRaw<OurRefund[]>`
    SELECT r.id::text, r.payment_id::text, p.provider_charge_id, coalesce(p.captured_minor, p.amount_minor) AS captured, r.currency, r.status,
           r.provider_refund_id, r.provider_key,
           (SELECT sum(e.amount_minor) FROM ledger_entries e WHERE e.refund_id = r.id AND e.entry_type = 'refund_revenue')::bigint AS reversed
      FROM refunds r JOIN payments p ON p.id = r.payment_id
     WHERE r.created_at >= ${opts.windowStart} OR r.payment_id::text = ANY(${opts.carriedPaymentIds}::text[])`;
  // Our books alone: the reversals of a payment beyond its capture (the database refuses it).
  const byPayment = new Map<string, { captured: number; reversed: number; charge: string }>();
  for (const r of ours) {
    const p = byPayment.get(r.payment_id) ?? {
      captured: r.captured,
      reversed: 0,
      charge: r.provider_charge_id,
    };
    p.reversed += Number(r.reversed ?? 0);
    byPayment.set(r.payment_id, p);
  }
  for (const [paymentId, p] of byPayment) {
    if (p.reversed > p.captured)
      found.push({
        kind: "refund_beyond_charge",
        paymentId,
        chargeId: p.charge,
        detail: `the ledger reversed ${p.reversed} of a capture of ${p.captured}`,
      });
  }
  if (!opts.providerReachable) return found;

  // The provider's side: the window's refunds of our charges, and every refund of those charges.
  const listed: Refund[] = [];
  for await (const r of deps.provider.listRefunds({ createdGte: opts.windowStart })) listed.push(r);
  const chargeIds = new Set([
    ...listed.map((r) => r.charge),
    ...[...byPayment.values()].map((p) => p.charge),
  ]);
  const payments = await deps.prisma.payment.findMany({
    // Through the capture, where a charge id is indexed (refunds are of captured charges).
    where: { ledgerTransactions: { some: { providerChargeId: { in: [...chargeIds] } } } },
    select: { id: true, providerChargeId: true, amountMinor: true, capturedMinor: true },
  });
  const paymentOfCharge = new Map(payments.map((p) => [p.providerChargeId as string, p.id]));
  for (const p of payments)
    if (!byPayment.has(p.id))
      byPayment.set(p.id, {
        // A manual capture may have taken less than was authorized.
        captured: p.capturedMinor ?? p.amountMinor,
        reversed: 0,
        charge: p.providerChargeId as string,
      });
  const theirs = new Map<string, Refund>();
  for (const charge of paymentOfCharge.keys())
    for await (const r of deps.provider.listRefunds({ charge })) theirs.set(r.id, r);

  const oursById = new Map(ours.map((r) => [r.id, r]));
  const oursByProviderId = new Map(
    ours.flatMap((r) => (r.provider_refund_id ? [[r.provider_refund_id, r]] : [])),
  );
  const refundedPerCharge = new Map<string, number>();
  for (const refund of theirs.values()) {
    refundedPerCharge.set(refund.charge, (refundedPerCharge.get(refund.charge) ?? 0) + refund.amount);
    const our = oursByProviderId.get(refund.id) ?? oursById.get(refund.metadata.refund_id ?? "");
    const paymentId =
      our?.payment_id ?? refund.metadata.payment_id ?? paymentOfCharge.get(refund.charge) ?? null;
    const booked = our && our.reversed !== null && our.provider_refund_id === refund.id;
    if (!booked) {
      if (Date.parse(refund.createdAt) > opts.bookingCutoffMs) continue;
      found.push({
        kind: "refund_without_postings",
        paymentId,
        chargeId: refund.id,
        detail:
          our?.provider_refund_id && our.provider_refund_id !== refund.id
            ? `a second provider refund ${refund.id} of ${refund.amount} for refund ${our.id}, which is booked with ${our.provider_refund_id}`
            : `provider refund of ${refund.amount} ${refund.currency.toUpperCase()} on ${refund.charge} has no ledger reversal`,
      });
    } else if (Number(our.reversed) !== refund.amount) {
      found.push({
        kind: "refund_amount_mismatch",
        paymentId,
        chargeId: refund.id,
        detail: `provider refund of ${refund.amount}, ledger reversal of ${our.reversed}`,
      });
    }
  }
  for (const our of ours) {
    if (our.reversed === null || !our.provider_refund_id || theirs.has(our.provider_refund_id)) continue;
    found.push({
      kind: "postings_without_refund",
      paymentId: our.payment_id,
      chargeId: our.provider_refund_id,
      detail: `the ledger reversed refund ${our.id}, which the provider does not have`,
    });
  }
  for (const [charge, refunded] of refundedPerCharge) {
    const paymentId = paymentOfCharge.get(charge);
    const captured = paymentId ? byPayment.get(paymentId)?.captured : undefined;
    if (paymentId && captured !== undefined && refunded > captured)
      found.push({
        kind: "refund_beyond_charge",
        paymentId,
        chargeId: charge,
        detail: `the provider refunded ${refunded} of a charge of ${captured}`,
      });
  }
  return found;
}
