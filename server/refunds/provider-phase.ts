import { LeaseLostError } from "@idempotent-checkout/idempotency";
import type { Db } from "../db";
import { domainErrors } from "../errors";
import { isProviderError, type ProviderError, type Refund, type RefundProvider } from "../provider";
import type { TrackedRefund } from "./tracked";

/** The provider's refund made with our derived key or, should it have forgotten keys, our refund id. */
export async function findEarlierRefund(
  provider: RefundProvider,
  refund: TrackedRefund,
): Promise<Refund | null> {
  try {
    for (const filter of [{ idempotencyKey: refund.providerKey }, { metadata: { refund_id: refund.id } }]) {
      for await (const found of provider.listRefunds(filter)) {
        if (found.metadata.refund_id === refund.id) return checkedRefund(found, refund);
      }
    }
    return null;
  } catch (error) {
    if (isProviderError(error)) throw providerError(error);
    throw error;
  }
}

function checkedRefund(found: Refund, refund: TrackedRefund): Refund {
  if (
    found.amount !== refund.amountMinor ||
    found.charge !== refund.providerChargeId ||
    found.currency.toUpperCase() !== refund.currency
  ) {
    throw new Error(`provider refund ${found.id} does not match refund ${refund.id}`);
  }
  return found;
}

/** The provider's definite refusal; `restMinor`: what it says is left on the charge (amount_too_large). */
export interface ProviderRefusal {
  refused: string;
  code: string;
  restMinor: number | null;
}

/**
 * What the provider has left to refund on the refund's charge, from its own records (the charge
 * less its refunds), so that a refusal's figures agree with the provider's, not with our books.
 * Unreadable now: a retryable error, and the retry asks again.
 */
async function restAtProvider(provider: RefundProvider, refund: TrackedRefund): Promise<number> {
  try {
    const charge = await provider.getCharge(refund.providerChargeId);
    let refunded = 0;
    for await (const made of provider.listRefunds({ charge: refund.providerChargeId }))
      refunded += made.amount;
    return Math.max(0, (charge?.amount ?? 0) - refunded);
  } catch (error) {
    if (isProviderError(error)) throw providerError(error);
    throw error;
  }
}

/** Provider answers that prove no refund was made for this request, whatever earlier attempts did. */
const DEFINITE_REFUSALS = new Set(["amount_too_large", "charge_not_refundable", "resource_missing"]);

function providerError(error: ProviderError) {
  const retryAfterSeconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
  return error.kind === "conflict"
    ? domainErrors.inFlightAtProvider(retryAfterSeconds)
    : domainErrors.providerUnavailable(error.kind, retryAfterSeconds);
}

/**
 * Phase 2: the refund at the provider, or why it refused for good. A durable mark that a request
 * may be out commits before every request (for a fresh refund, with its creation); when the
 * request provably never left (connection refused), the mark is taken back.
 */
export async function refundAtProvider(
  deps: { prisma: Db; provider: RefundProvider },
  refund: TrackedRefund,
  resumed: boolean,
  fault: string | undefined,
): Promise<Refund | ProviderRefusal> {
  const mark = resumed
    ? await markRefundRequest(deps.prisma, refund)
    : { previous: null, mine: refund.refundRequestedAt };
  try {
    const made = await deps.provider.createRefund(
      {
        charge: refund.providerChargeId,
        amount: refund.amountMinor,
        metadata: { refund_id: refund.id, payment_id: refund.paymentId },
      },
      refund.providerKey,
      fault ? { fault } : undefined,
    );
    return checkedRefund(made, refund);
  } catch (error) {
    if (!isProviderError(error)) throw error;
    if (error.kind === "rejected" && error.code && DEFINITE_REFUSALS.has(error.code)) {
      const restMinor =
        error.code === "amount_too_large" ? await restAtProvider(deps.provider, refund) : null;
      return { refused: error.message, code: error.code, restMinor };
    }
    if (!error.requestMayHaveLeft) await unmarkRefundRequest(deps.prisma, refund.id, mark);
    throw providerError(error);
  }
}

interface RequestMark {
  previous: string | null;
  mine: string | null;
}

/** Commits "a refund request may be out since now" (the database's now) before a re-send. */
async function markRefundRequest(prisma: Db, refund: TrackedRefund): Promise<RequestMark> {
  const [row] = await prisma.$queryRaw<{ mine: Date }[]>`
    UPDATE refunds SET refund_requested_at = now()
     WHERE id = ${refund.id}::uuid AND status = 'pending'
    RETURNING refund_requested_at AS mine`;
  // Settled meanwhile by another attempt that took our key over: this one's writes are fenced.
  if (!row) throw new LeaseLostError();
  return { previous: refund.refundRequestedAt, mine: row.mine.toISOString() };
}

/** The request never left: the mark goes back to what it was, unless another attempt marked since. */
async function unmarkRefundRequest(prisma: Db, refundId: string, mark: RequestMark) {
  if (mark.mine === null) return;
  await prisma.$executeRaw`
    UPDATE refunds SET refund_requested_at = ${mark.previous}::timestamptz
     WHERE id = ${refundId}::uuid AND status = 'pending' AND refund_requested_at = ${mark.mine}::timestamptz`;
}
