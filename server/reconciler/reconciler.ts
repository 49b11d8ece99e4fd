import { type Db, newId } from "../db";
import { type Charge, isProviderError, type PaymentProvider } from "../provider";
import { AUTHORIZATION_MISMATCH_KINDS } from "./authorizations";
import { checkBookings, confirmed, PAYMENT_INCLUDE } from "./booked";
import { type CheckTimes, checkCharge, type Mismatch, type MismatchKind } from "./checks";
import { OPEN_LIMIT, type OpenMismatch, openMismatches, recordFindings } from "./open-mismatches";
import { checkRefunds } from "./refunds";

export type { Mismatch, MismatchKind, OpenMismatch };

export interface ReconciliationReport {
  id: string;
  startedAt: string;
  finishedAt: string | null;
  windowStart: string;
  chargesChecked: number;
  paymentsChecked: number;
  /**
   * Set when the provider could not be read: this run then checked our side only, and every
   * mismatch open before it stays open.
   */
  providerError: string | null;
  /** Every mismatch open after this run: found by it, or by earlier runs and not yet resolved. */
  mismatches: OpenMismatch[];
}

/** Charges this app made carry this in their metadata; others on the account are not ours. */
export const CHARGE_SOURCE = "idempotent-checkout";

/** How many unfinished payments of each kind a run lists, at most. */
const CARRIED_LIMIT = 1000;

/**
 * Compares the provider's charges with the ledger and records every mismatch. The provider is
 * listed over a window (24 h by default), but nothing drops out of sight with age: every open
 * mismatch is looked at again, and stays open until a run re-examines it and finds it fine (or
 * an operator resolves it); every pending payment and success without a receipt is reported
 * however old. When the provider cannot be reached, our side is still checked, the report says
 * so, and nothing provider-side is closed. Refunds are compared the same way (checkRefunds). Several processes may run it at once: open mismatches
 * are rows with one open row per item (decision 0051).
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
  const ago = (seconds: number) => new Date(startedAt.getTime() - seconds * 1000);
  const openAtStart = await openMismatches(deps.prisma);
  const carried = carriedIds(openAtStart);

  const mismatches: Mismatch[] = [];
  let providerError: string | null = null;
  let charges = new Map<string, Charge>();
  try {
    charges = await ourCharges(deps.provider, windowStart, carried.chargeIds);
  } catch (error) {
    if (!isProviderError(error)) throw error;
    providerError = error.message;
  }

  const named = [...charges.values()].flatMap((c) => (c.metadata.payment_id ? [c.metadata.payment_id] : []));
  const inWindow = await deps.prisma.payment.findMany({
    where: {
      OR: [
        { createdAt: { gte: windowStart } },
        // A captured charge's payment, through its capture (the payment's charge id is not indexed).
        { ledgerTransactions: { some: { providerChargeId: { in: [...charges.keys()] } } } },
        { id: { in: [...named, ...carried.paymentIds].filter(isUuid) } },
      ],
    },
    include: PAYMENT_INCLUDE,
  });
  // Every open authorization however old (a hold lives for days): its charge is asked for below.
  const holds = await deps.prisma.payment.findMany({
    where: { captureBefore: { not: null } },
    include: PAYMENT_INCLUDE,
    orderBy: { captureBefore: "asc" },
    take: CARRIED_LIMIT,
  });
  const byId = new Map([...holds, ...inWindow].map((p) => [p.id, p]));
  const payments = [...byId.values()];
  const byCharge = new Map(payments.flatMap((p) => (p.providerChargeId ? [[p.providerChargeId, p]] : [])));

  if (providerError === null) {
    const times: CheckTimes = {
      nowMs: startedAt.getTime(),
      bookingMs: ago(opts.graceSeconds ?? 60).getTime(),
      expiryMs: ago(opts.graceSeconds ?? 60).getTime(),
    };
    try {
      for (const charge of charges.values()) {
        const found = checkCharge(charge, { byId, byCharge }, times);
        if (found) mismatches.push(...(await confirmed(deps, found, byId, times)));
      }
      mismatches.push(...(await checkBookings(deps, payments, charges, times)));
    } catch (error) {
      if (!isProviderError(error)) throw error;
      providerError = error.message;
    }
  }
  try {
    mismatches.push(
      ...(await checkRefunds(deps, {
        windowStart,
        bookingCutoffMs: ago(opts.graceSeconds ?? 60).getTime(),
        carriedPaymentIds: carried.paymentIds.filter(isUuid),
        providerReachable: providerError === null,
      })),
    );
  } catch (error) {
    if (!isProviderError(error)) throw error;
    providerError = error.message;
  }
  const ours = await unfinished(
    deps.prisma,
    ago(opts.receiptGraceSeconds ?? 300),
    ago(opts.pendingGraceSeconds ?? 600),
  );
  mismatches.push(...ours.found);
  if (holds.length >= CARRIED_LIMIT) ours.truncated.push(...AUTHORIZATION_MISMATCH_KINDS);

  const id = newId();
  await recordFindings(deps.prisma, {
    id,
    openAtStart,
    found: mismatches,
    providerReached: providerError === null,
    truncated: ours.truncated,
  });
  const open = await openMismatches(deps.prisma);
  const report: ReconciliationReport = {
    id,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    windowStart: windowStart.toISOString(),
    chargesChecked: charges.size,
    paymentsChecked: payments.length,
    providerError,
    mismatches: open,
  };
  await deps.prisma.reconciliationRun.create({
    data: {
      id: report.id,
      startedAt,
      finishedAt: new Date(report.finishedAt as string),
      windowStart,
      chargesChecked: report.chargesChecked,
      paymentsChecked: report.paymentsChecked,
      providerError,
      mismatches: open as unknown as object[],
    },
  });
  return report;
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/** Ours: tagged with our source, or naming a payment (a charge made for us by hand). */
function isOurs(c: Charge): boolean {
  return c.metadata.source === CHARGE_SOURCE || c.metadata.payment_id !== undefined;
}

/** The window's charges, plus those of the previous report's open items, however old. */
async function ourCharges(provider: PaymentProvider, since: Date, carriedIds: string[]) {
  const charges = new Map<string, Charge>();
  for await (const c of provider.listCharges({ createdGte: since })) if (isOurs(c)) charges.set(c.id, c);
  for (const id of carriedIds) {
    if (charges.has(id)) continue;
    const c = await provider.getCharge(id);
    if (c && isOurs(c)) charges.set(c.id, c);
  }
  return charges;
}

/** Our side alone, at any age: payments still pending, and successes still without a receipt. */
async function unfinished(prisma: Db, receiptCutoff: Date, pendingCutoff: Date) {
  const [unreceipted, pending] = await Promise.all([
    prisma.payment.findMany({
      where: { status: "succeeded", updatedAt: { lte: receiptCutoff }, order: { receipt: null } },
      orderBy: { updatedAt: "asc" },
      take: CARRIED_LIMIT,
    }),
    // The completer could not settle it (provider down for long): it holds its order.
    prisma.payment.findMany({
      where: { status: "pending", createdAt: { lte: pendingCutoff } },
      orderBy: { createdAt: "asc" },
      take: CARRIED_LIMIT,
    }),
  ]);
  const found: Mismatch[] = [
    ...unreceipted.map((p) => ({
      kind: "succeeded_without_receipt" as const,
      paymentId: p.id,
      chargeId: p.providerChargeId,
      detail: `succeeded at ${p.updatedAt.toISOString()}, still no receipt`,
    })),
    ...pending.map((p) => ({
      kind: "stale_pending_payment" as const,
      paymentId: p.id,
      chargeId: p.providerChargeId,
      detail: `pending since ${p.createdAt.toISOString()}`,
    })),
  ];
  // A list cut at its limit proves nothing about the items past it: they are not closed.
  const truncated: MismatchKind[] = [
    ...(unreceipted.length >= CARRIED_LIMIT ? (["succeeded_without_receipt"] as const) : []),
    ...(pending.length >= CARRIED_LIMIT ? (["stale_pending_payment"] as const) : []),
  ];
  return { found, truncated };
}

/** The open mismatches' charge and payment ids, looked at again so that each stays seen. */
function carriedIds(open: OpenMismatch[]): { chargeIds: string[]; paymentIds: string[] } {
  const items = open.slice(0, OPEN_LIMIT);
  const ids = (pick: (m: Mismatch) => (string | null | undefined)[]) => [
    ...new Set(items.flatMap(pick).filter((id): id is string => typeof id === "string" && id.length > 0)),
  ];
  return {
    chargeIds: ids((m) => [m.chargeId, m.bookedChargeId]),
    paymentIds: ids((m) => [m.paymentId]),
  };
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
    providerError: run.providerError,
    // The open set now, not the run's snapshot: an operator's resolution shows at once.
    mismatches: await openMismatches(prisma),
  };
}
