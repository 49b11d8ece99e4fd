import type { Db } from "../db";
import { REFUND_STATUSES, type RefundRecord, refundView, type TRefund } from "./views";

const REFUND_FIELDS = {
  id: true,
  paymentId: true,
  amountMinor: true,
  currency: true,
  reason: true,
  status: true,
  providerRefundId: true,
  createdAt: true,
} as const satisfies Record<keyof RefundRecord, true>;

/** What a payment's refunds come to: refunded (succeeded), pending, and what is left to refund. */
export interface RefundTotals {
  refundedMinor: number;
  pendingMinor: number;
  refundableMinor: number;
}

export function refundTotals(capturedMinor: number, status: string, refunds: TRefund[]): RefundTotals {
  const sum = (s: string) => refunds.filter((r) => r.status === s).reduce((n, r) => n + r.amountMinor, 0);
  const refundedMinor = sum("succeeded");
  const pendingMinor = sum("pending");
  const refundableMinor =
    status === "succeeded" ? Math.max(0, capturedMinor - refundedMinor - pendingMinor) : 0;
  return { refundedMinor, pendingMinor, refundableMinor };
}

/** The refunds of these payments, oldest first, grouped by payment. */
export async function refundsOfPayments(prisma: Db, paymentIds: string[]): Promise<Map<string, TRefund[]>> {
  const rows =
    paymentIds.length === 0
      ? []
      : await prisma.refund.findMany({
          where: { paymentId: { in: paymentIds } },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          select: REFUND_FIELDS,
        });
  const byPayment = new Map<string, TRefund[]>(paymentIds.map((id) => [id, []]));
  for (const row of rows) byPayment.get(row.paymentId)?.push(refundView(row));
  return byPayment;
}

/** An order's refunds (of all its payments), oldest first. */
export async function refundsOfOrder(prisma: Db, orderId: string): Promise<TRefund[]> {
  const rows = await prisma.refund.findMany({
    where: { payment: { orderId } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: REFUND_FIELDS,
  });
  return rows.map(refundView);
}

/** How many refunds are in each status (for /api/metrics). */
export async function refundsByStatus(prisma: Db): Promise<Record<(typeof REFUND_STATUSES)[number], number>> {
  const rows = await prisma.refund.groupBy({ by: ["status"], _count: { _all: true } });
  const counts = Object.fromEntries(REFUND_STATUSES.map((s) => [s, 0])) as Record<
    (typeof REFUND_STATUSES)[number],
    number
  >;
  for (const r of rows) if (r.status in counts) counts[r.status as keyof typeof counts] = r._count._all;
  return counts;
}
