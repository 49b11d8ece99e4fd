import type { Order, OrderItem, Payment } from "../generated/prisma/client";

export const PAYMENT_STATUSES = [
  "pending",
  "requires_action",
  "authorized",
  "succeeded",
  "declined",
  "failed",
  "canceled",
] as const;
export type TPaymentStatus = (typeof PAYMENT_STATUSES)[number];

type PaymentFields = Pick<
  Payment,
  "id" | "orderId" | "amountMinor" | "currency" | "status" | "providerChargeId"
> &
  Partial<Pick<Payment, "captureMethod" | "capturedMinor" | "captureBefore" | "actionUrl">>;

/**
 * The public shape of a payment: what `payments.create` answers and replays. `amountCaptured`:
 * what was taken (all of it for an automatic payment, the capture's amount for a manual one);
 * `captureBefore`: an authorization's deadline; `nextAction`: where the shopper authenticates
 * while the payment waits for it (status `requires_action`, an answer that is not final).
 */
export function paymentView(p: PaymentFields) {
  const status = (p.status === "pending" && p.actionUrl ? "requires_action" : p.status) as TPaymentStatus;
  return {
    id: p.id,
    orderId: p.orderId,
    amount: p.amountMinor,
    currency: p.currency,
    status,
    providerChargeId: p.providerChargeId,
    captureMethod: (p.captureMethod ?? "automatic") as "automatic" | "manual",
    amountCaptured: status === "succeeded" ? (p.capturedMinor ?? p.amountMinor) : 0,
    captureBefore: status === "authorized" && p.captureBefore ? p.captureBefore.toISOString() : null,
    nextAction:
      status === "requires_action" && p.actionUrl
        ? { type: "redirect_to_url" as const, url: p.actionUrl }
        : null,
  };
}

export type TPaymentView = ReturnType<typeof paymentView>;

/** A payment that holds its order (pending, authorized or succeeded). */
const OPEN = new Set(["pending", "authorized", "succeeded"]);

/** The order and its payment; the receipt, issued later by the receipts service, is added by the router. */
export function orderView(order: Order & { items?: OrderItem[]; payments?: Payment[] }) {
  const payments = order.payments ?? [];
  // The order's payment: the open or successful one, else the latest attempt.
  const payment = payments.find((p) => OPEN.has(p.status)) ?? payments.at(-1) ?? null;
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
