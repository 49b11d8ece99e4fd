import type { Db } from "../db";
import { namedRefusal } from "../db/error-codes";
import { domainErrors } from "../errors";
import type { TrackedRefund } from "./tracked";

/** What is left to refund on the refund's payment, beside this refund (for a refusal's answer). */
export async function refundableFacts(
  prisma: Db,
  refund: Pick<TrackedRefund, "paymentId" | "amountMinor"> & { id?: string },
) {
  const [row] = await prisma.$queryRaw<
    { amount_minor: number; currency: string; refunded: bigint; pending: bigint }[]
  >`
    SELECT p.amount_minor, p.currency,
           (SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE payment_id = p.id AND status = 'succeeded')::bigint AS refunded,
           (SELECT coalesce(sum(amount_minor), 0) FROM refunds
             WHERE payment_id = p.id AND status = 'pending' AND id IS DISTINCT FROM ${refund.id ?? null}::uuid)::bigint AS pending
      FROM payments p WHERE p.id = ${refund.paymentId}::uuid`;
  const captured = row?.amount_minor ?? 0;
  const refunded = Number(row?.refunded ?? 0);
  const pending = Number(row?.pending ?? 0);
  return {
    facts: {
      paymentId: refund.paymentId,
      amountMinor: refund.amountMinor,
      refundableMinor: Math.max(0, captured - refunded - pending),
      pendingMinor: pending,
      currency: row?.currency ?? "",
    },
    // It would fit should a pending refund fail: an answer that may change, so not stored.
    mayFitLater: refund.amountMinor <= captured - refunded,
  };
}

/**
 * The database's own refusal of phase 1 (the refunds trigger, known by SQLSTATE 23514 and its name
 * in CONSTRAINT or DETAIL, on the error or anything it wraps) as the answer phase 1 would have
 * given: the trigger is the guarantee, and its refusal is never a 500.
 */
export async function refusalOf(
  prisma: Db,
  request: Pick<TrackedRefund, "paymentId" | "amountMinor">,
  error: unknown,
) {
  const refusal = databaseRefusal(error);
  if (refusal === "refunds_within_captured") {
    const { facts, mayFitLater } = await refundableFacts(prisma, request);
    return domainErrors.refundExceedsRefundable(facts, mayFitLater ? 1 : undefined);
  }
  if (refusal === "refunds_payment_succeeded") {
    const payment = await prisma.payment.findUnique({
      where: { id: request.paymentId },
      select: { status: true },
    });
    return domainErrors.paymentNotRefundable({ id: request.paymentId, status: payment?.status ?? "unknown" });
  }
  return undefined;
}

/** The refunds trigger's refusals that have an answer of their own (decision 0112). */
const CHECK_VIOLATION = "23514";
const REFUSALS = ["refunds_within_captured", "refunds_payment_succeeded"] as const;

export function databaseRefusal(error: unknown): (typeof REFUSALS)[number] | undefined {
  return namedRefusal(error, CHECK_VIOLATION, REFUSALS);
}
