import type { Db } from "../db";
import { domainErrors } from "../errors";
import { askProvider, callProvider } from "../operation/provider-call";
import type { Refund, RefundProvider } from "../provider";
import { REFUND_REQUESTED, type TrackedRefund } from "./tracked";

/** The provider's refund made with our derived key or, should it have forgotten keys, our refund id. */
export async function findEarlierRefund(
  provider: RefundProvider,
  refund: TrackedRefund,
): Promise<Refund | null> {
  return askProvider(async () => {
    for (const filter of [{ idempotencyKey: refund.providerKey }, { metadata: { refund_id: refund.id } }]) {
      for await (const found of provider.listRefunds(filter)) {
        if (found.metadata.refund_id === refund.id) return checkedRefund(found, refund);
      }
    }
    return null;
  }, domainErrors.inFlightAtProvider);
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
  return askProvider(async () => {
    const charge = await provider.getCharge(refund.providerChargeId);
    let refunded = 0;
    for await (const made of provider.listRefunds({ charge: refund.providerChargeId }))
      refunded += made.amount;
    return Math.max(0, (charge?.amount ?? 0) - refunded);
  }, domainErrors.inFlightAtProvider);
}

/** Provider answers that prove no refund was made for this request, whatever earlier attempts did. */
const DEFINITE_REFUSALS = new Set(["amount_too_large", "charge_not_refundable", "resource_missing"]);
const REFUND_TERMS = {
  mark: REFUND_REQUESTED,
  definiteRefusals: DEFINITE_REFUSALS,
  inFlight: domainErrors.inFlightAtProvider,
};

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
  const request = {
    charge: refund.providerChargeId,
    amount: refund.amountMinor,
    metadata: { refund_id: refund.id, payment_id: refund.paymentId },
  };
  const attempt = { id: refund.id, requestedAt: refund.refundRequestedAt, resumed };
  const outcome = await callProvider(deps.prisma, REFUND_TERMS, attempt, () =>
    deps.provider.createRefund(request, refund.providerKey, fault ? { fault } : undefined),
  );
  if ("made" in outcome) return checkedRefund(outcome.made, refund);
  const restMinor = outcome.code === "amount_too_large" ? await restAtProvider(deps.provider, refund) : null;
  return { ...outcome, restMinor };
}
