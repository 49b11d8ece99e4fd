import { z } from "zod";
import type { Db } from "../db";

export const ZAuthorization = z.object({
  id: z.string(),
  orderId: z.string(),
  accountHandle: z.string(),
  amountMinor: z.number().int(),
  currency: z.string(),
  paymentMethod: z.string(),
  captureBefore: z.iso.datetime({ offset: true }).nullable(),
  createdAt: z.iso.datetime({ offset: true }),
});
export type TAuthorization = z.infer<typeof ZAuthorization>;

/** Authorized payments awaiting capture, the soonest deadline first (payments_authorized_deadline_idx). */
export async function listAuthorizations(prisma: Db, limit: number): Promise<TAuthorization[]> {
  const rows = await prisma.payment.findMany({
    where: { status: "authorized" },
    orderBy: [{ captureBefore: "asc" }, { id: "asc" }],
    take: limit,
    select: {
      id: true,
      orderId: true,
      amountMinor: true,
      currency: true,
      paymentMethod: true,
      captureBefore: true,
      createdAt: true,
      order: { select: { account: { select: { handle: true } } } },
    },
  });
  return rows.map((p) => ({
    id: p.id,
    orderId: p.orderId,
    accountHandle: p.order.account.handle,
    amountMinor: p.amountMinor,
    currency: p.currency,
    paymentMethod: p.paymentMethod,
    captureBefore: p.captureBefore?.toISOString() ?? null,
    createdAt: p.createdAt.toISOString(),
  }));
}
