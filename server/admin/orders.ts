import type { Db } from "../db";
import type { PaymentProvider } from "../provider";
import { paymentTrails } from "./payment-trail";
import type { TOrderDetail } from "./schemas";

/** Any account's order, with its payments, their provider charges and ledger entries. */
export async function getOrderDetail(
  prisma: Db,
  provider: Pick<PaymentProvider, "getCharge">,
  orderId: string,
): Promise<TOrderDetail | null> {
  const order = await prisma.order.findUnique({
    where: { id: orderId },
    include: {
      account: { select: { handle: true } },
      items: { orderBy: { id: "asc" } },
      payments: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    },
  });
  if (!order) return null;
  const payments = await paymentTrails(prisma, provider, order.payments);
  return {
    id: order.id,
    accountId: order.accountId,
    accountHandle: order.account.handle,
    status: order.status,
    totalMinor: order.totalMinor,
    currency: order.currency,
    createdAt: order.createdAt.toISOString(),
    items: order.items.map((i) => ({
      sku: i.sku,
      name: i.name,
      unitPriceMinor: i.unitPriceMinor,
      quantity: i.quantity,
      lineTotalMinor: i.lineTotalMinor,
    })),
    payments,
    refunds: payments.flatMap((p) => p.refunds).sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
  };
}
