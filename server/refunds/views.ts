import { z } from "zod";
import { ZCurrencyOfAmount } from "../../shared/currency";
import type { Refund } from "../generated/prisma/client";

export const REFUND_STATUSES = ["pending", "succeeded", "failed"] as const;

/** A refund as the API answers it (admin.refunds.create, POST /api/v1/refunds, order views). */
export const ZRefund = z
  .object({
    id: z.string(),
    paymentId: z.string(),
    /** Integer minor units of `currency`. */
    amountMinor: z.number().int(),
    currency: ZCurrencyOfAmount,
    reason: z.string(),
    status: z.enum(REFUND_STATUSES),
    providerRefundId: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: "Refund" });
export type TRefund = z.infer<typeof ZRefund>;

export type RefundRecord = Pick<
  Refund,
  "id" | "paymentId" | "amountMinor" | "currency" | "reason" | "status" | "providerRefundId" | "createdAt"
>;

export function refundView(r: RefundRecord): TRefund {
  return {
    id: r.id,
    paymentId: r.paymentId,
    amountMinor: r.amountMinor,
    currency: r.currency,
    reason: r.reason,
    status: r.status as TRefund["status"],
    providerRefundId: r.providerRefundId,
    createdAt: r.createdAt.toISOString(),
  };
}
