import type { Order, OrderItem, Payment } from "../generated/prisma/client";

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

export type TPaymentView = ReturnType<typeof paymentView>;

/** The order and its payment; the receipt, issued later by the receipts service, is added by the router. */
export function orderView(order: Order & { items?: OrderItem[]; payments?: Payment[] }) {
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
  };
}
