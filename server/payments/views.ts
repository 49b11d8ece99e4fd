import type { Order, OrderItem, Payment, Receipt } from "../generated/prisma/client";
import { receiptView } from "../receipts";

export type TPaymentStatus = "pending" | "succeeded" | "declined" | "failed";

/** The public shape of a payment: what `payments.create` answers and replays. */
export function paymentView(
  p: Pick<Payment, "id" | "orderId" | "amountMinor" | "currency" | "status" | "providerChargeId">,
) {
  return {
    id: p.id,
    orderId: p.orderId,
    amount: p.amountMinor,
    currency: p.currency,
    status: p.status as TPaymentStatus,
    providerChargeId: p.providerChargeId,
  };
}

export function orderView(
  order: Order & { items?: OrderItem[]; payments?: Payment[]; receipt?: Receipt | null },
) {
  const payments = order.payments ?? [];
  // The order's payment: the open or successful one, else the latest attempt.
  const payment =
    payments.find((p) => p.status === "succeeded" || p.status === "pending") ?? payments.at(-1) ?? null;
  return {
    id: order.id,
    total: order.totalMinor,
    currency: order.currency,
    status: order.status,
    items: (order.items ?? []).map((i) => ({
      sku: i.sku,
      name: i.name,
      unitPrice: i.unitPriceMinor,
      quantity: i.quantity,
      lineTotal: i.lineTotalMinor,
    })),
    payment: payment && {
      ...paymentView(payment),
      paymentMethod: payment.paymentMethod,
      failureMessage: payment.failureMessage,
    },
    // Issued by the receipts service shortly after the payment succeeds: null until it arrives.
    receipt: order.receipt ? receiptView(order.receipt) : null,
  };
}
