import { randomUUID } from "node:crypto";
import type { Db } from "../db";
import type { Charge, PaymentProvider } from "./provider";

export type MismatchKind =
  | "charge_without_postings"
  | "postings_without_charge"
  | "amount_mismatch"
  | "currency_mismatch"
  | "declined_with_postings"
  | "charge_missing_at_provider"
  | "succeeded_without_receipt"
  | "stale_pending_payment";

export interface Mismatch {
  kind: MismatchKind;
  paymentId: string | null;
  chargeId: string | null;
  detail: string;
}

export interface ReconciliationReport {
  id: string;
  startedAt: string;
  finishedAt: string | null;
  windowStart: string;
  chargesChecked: number;
  paymentsChecked: number;
  mismatches: Mismatch[];
}

/** Charges this app made carry this in their metadata; others on the account are not ours. */
export const CHARGE_SOURCE = "idempotent-checkout";

/**
 * Compares the provider's charges with the ledger over a window and records every mismatch.
 * Read-only apart from its report, so several processes may run it at once. Charges younger
 * than the grace period are left out of "charge without postings": the completer books those.
 * A succeeded payment is owed a receipt once receiptGraceSeconds have passed since it settled.
 */
export async function runReconciliation(
  deps: { prisma: Db; provider: PaymentProvider },
  opts: {
    windowStart?: Date;
    graceSeconds?: number;
    receiptGraceSeconds?: number;
    pendingGraceSeconds?: number;
  } = {},
): Promise<ReconciliationReport> {
  const startedAt = new Date();
  const windowStart = opts.windowStart ?? new Date(startedAt.getTime() - 24 * 3600_000);
  const cutoff = startedAt.getTime() - (opts.graceSeconds ?? 60) * 1000;
  const receiptCutoff = startedAt.getTime() - (opts.receiptGraceSeconds ?? 300) * 1000;

  const charges = new Map<string, Charge>();
  for await (const c of deps.provider.listCharges({ createdGte: windowStart })) {
    if (c.metadata.source === CHARGE_SOURCE) charges.set(c.id, c);
  }
  const payments = await deps.prisma.payment.findMany({
    where: { OR: [{ createdAt: { gte: windowStart } }, { providerChargeId: { in: [...charges.keys()] } }] },
    include: { ledgerEntries: true },
  });
  const byId = new Map(payments.map((p) => [p.id, p]));
  const byCharge = new Map(
    payments.filter((p) => p.providerChargeId).map((p) => [p.providerChargeId as string, p]),
  );
  const mismatches: Mismatch[] = [];

  for (const charge of charges.values()) {
    const payment = byCharge.get(charge.id) ?? byId.get(charge.metadata.payment_id ?? "");
    const clearing = payment?.ledgerEntries.find((e) => e.entryType === "provider_clearing");
    if (charge.status === "declined") {
      if (payment && payment.ledgerEntries.length > 0) {
        mismatches.push({
          kind: "declined_with_postings",
          paymentId: payment.id,
          chargeId: charge.id,
          detail: "the provider declined this charge, yet the ledger booked it",
        });
      }
      continue;
    }
    if (!payment || !clearing) {
      if (Date.parse(charge.createdAt) <= cutoff) {
        mismatches.push({
          kind: "charge_without_postings",
          paymentId: payment?.id ?? charge.metadata.payment_id ?? null,
          chargeId: charge.id,
          detail: `charge of ${charge.amount} ${charge.currency.toUpperCase()} has no ledger postings`,
        });
      }
      continue;
    }
    if (clearing.currency !== charge.currency.toUpperCase()) {
      mismatches.push({
        kind: "currency_mismatch",
        paymentId: payment.id,
        chargeId: charge.id,
        detail: `charge in ${charge.currency.toUpperCase()}, ledger in ${clearing.currency}`,
      });
    } else if (Number(clearing.amountMinor) !== charge.amount) {
      mismatches.push({
        kind: "amount_mismatch",
        paymentId: payment.id,
        chargeId: charge.id,
        detail: `charge of ${charge.amount}, ledger of ${clearing.amountMinor}`,
      });
    }
  }

  for (const payment of payments) {
    if (
      payment.ledgerEntries.length === 0 ||
      (payment.providerChargeId && charges.has(payment.providerChargeId))
    )
      continue;
    // Outside the listing (older, or not tagged as ours): ask the provider directly.
    const charge = payment.providerChargeId ? await deps.provider.getCharge(payment.providerChargeId) : null;
    if (!charge) {
      mismatches.push({
        kind: "postings_without_charge",
        paymentId: payment.id,
        chargeId: payment.providerChargeId,
        detail: "the ledger booked a charge the provider does not have",
      });
    } else if (charge.status !== "succeeded") {
      mismatches.push({
        kind: "declined_with_postings",
        paymentId: payment.id,
        chargeId: charge.id,
        detail: `the provider's charge is ${charge.status}`,
      });
    }
  }

  const owed = payments.filter((p) => p.status === "succeeded" && p.updatedAt.getTime() <= receiptCutoff);
  const receipted = new Set(
    (
      await deps.prisma.receipt.findMany({
        where: { paymentId: { in: owed.map((p) => p.id) } },
        select: { paymentId: true },
      })
    ).map((r) => r.paymentId),
  );
  for (const payment of owed) {
    if (receipted.has(payment.id)) continue;
    mismatches.push({
      kind: "succeeded_without_receipt",
      paymentId: payment.id,
      chargeId: payment.providerChargeId,
      detail: `succeeded at ${payment.updatedAt.toISOString()}, still no receipt`,
    });
  }

  // A payment the completer could not settle (provider down for long, a key given up after
  // MAX_ATTEMPTS): it holds its order, so an operator must look at it.
  const pendingCutoff = startedAt.getTime() - (opts.pendingGraceSeconds ?? 600) * 1000;
  for (const payment of payments) {
    if (payment.status !== "pending" || payment.createdAt.getTime() > pendingCutoff) continue;
    mismatches.push({
      kind: "stale_pending_payment",
      paymentId: payment.id,
      chargeId: payment.providerChargeId,
      detail: `pending since ${payment.createdAt.toISOString()}`,
    });
  }

  const report: ReconciliationReport = {
    id: randomUUID(),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    windowStart: windowStart.toISOString(),
    chargesChecked: charges.size,
    paymentsChecked: payments.length,
    mismatches,
  };
  await deps.prisma.reconciliationRun.create({
    data: {
      id: report.id,
      startedAt,
      finishedAt: new Date(report.finishedAt as string),
      windowStart,
      chargesChecked: report.chargesChecked,
      paymentsChecked: report.paymentsChecked,
      mismatches: mismatches as unknown as object[],
    },
  });
  return report;
}

export async function latestReconciliation(prisma: Db): Promise<ReconciliationReport | null> {
  const run = await prisma.reconciliationRun.findFirst({ orderBy: { startedAt: "desc" } });
  if (!run) return null;
  return {
    id: run.id,
    startedAt: run.startedAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
    windowStart: run.windowStart.toISOString(),
    chargesChecked: run.chargesChecked,
    paymentsChecked: run.paymentsChecked,
    mismatches: run.mismatches as unknown as Mismatch[],
  };
}
