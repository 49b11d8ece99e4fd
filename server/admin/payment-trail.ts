import type { Db } from "../db";
import type { Payment } from "../generated/prisma/client";
import type { PaymentProvider } from "../provider";
import { refundsOfPayments, refundTotals } from "../refunds";
import { ledgerTransactionsOf } from "./ledger";
import type { TChargeLookup, TPaymentTrail } from "./schemas";

/** An admin page must not hang on a provider that does not answer. */
const CHARGE_LOOKUP_TIMEOUT_MS = 3_000;

export async function lookUpCharge(
  provider: Pick<PaymentProvider, "getCharge">,
  chargeId: string | null,
): Promise<TChargeLookup> {
  if (!chargeId) return { state: "not_charged" };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${CHARGE_LOOKUP_TIMEOUT_MS} ms`)),
      CHARGE_LOOKUP_TIMEOUT_MS,
    );
  });
  try {
    const charge = await Promise.race([provider.getCharge(chargeId), timeout]);
    return charge ? { state: "found", charge } : { state: "missing", chargeId };
  } catch (error) {
    return {
      state: "unavailable",
      chargeId,
      message: error instanceof Error ? error.message : String(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Each payment with what the provider says about its charge and what the ledger booked for it. */
export async function paymentTrails(
  prisma: Db,
  provider: Pick<PaymentProvider, "getCharge">,
  payments: Payment[],
): Promise<TPaymentTrail[]> {
  const ids = payments.map((p) => p.id);
  const [transactions, charges, refunds] = await Promise.all([
    ledgerTransactionsOf(prisma, ids),
    Promise.all(payments.map((p) => lookUpCharge(provider, p.providerChargeId))),
    refundsOfPayments(prisma, ids),
  ]);
  return payments.map((p, i) => {
    const own = refunds.get(p.id) ?? [];
    const { refundedMinor, refundableMinor } = refundTotals(p.capturedMinor ?? p.amountMinor, p.status, own);
    return {
      id: p.id,
      orderId: p.orderId,
      idempotencyKeyId: p.idempotencyKeyId === null ? null : String(p.idempotencyKeyId),
      amountMinor: p.amountMinor,
      currency: p.currency,
      paymentMethod: p.paymentMethod,
      status: p.status,
      providerChargeId: p.providerChargeId,
      failureCode: p.failureCode,
      failureMessage: p.failureMessage,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
      charge: charges[i] ?? { state: "not_charged" },
      ledgerTransactions: transactions.filter((t) => t.paymentId === p.id),
      refunds: own,
      refundedMinor,
      refundableMinor,
    };
  });
}
