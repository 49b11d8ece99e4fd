import { z } from "zod";
import { ZCurrencyOfAmount } from "../../shared/currency";
import { listOrdersOfAccount, ORDER_HISTORY_MAX_PAGE } from "../payments/order-history";
import { createOrder, getOrderForAccount } from "../payments/orders";
import { orderView } from "../payments/views";
import { receiptView, refundReceiptNumbers } from "../receipts";
import { REFUND_STATUSES, refundsOfOrder } from "../refunds";
import { authedProcedure, limitedBy, router } from "../trpc";
import { ZPayment } from "./payments";

export const ZCreateOrder = z.object({
  items: z
    .array(z.object({ sku: z.string().min(1).max(64), quantity: z.number().int().min(1).max(99) }))
    .min(1)
    .max(50),
});

const ZOrderLine = z.object({
  sku: z.string(),
  name: z.string(),
  /** Integer minor units, as every amount. */
  unitPrice: z.number().int(),
  quantity: z.number().int(),
  lineTotal: z.number().int(),
});

export const ZOrderCreated = z
  .object({
    id: z.string(),
    total: z.number().int(),
    currency: ZCurrencyOfAmount,
    status: z.string().meta({ examples: ["pending_payment", "paid"] }),
    items: z.array(ZOrderLine),
  })
  .meta({ id: "OrderCreated" });

export const ZOrder = ZOrderCreated.extend({
  payment: ZPayment.extend({ paymentMethod: z.string(), failureMessage: z.string().nullable() }).nullable(),
  receipt: z
    .object({
      number: z.string(),
      issuedAt: z.string(),
      lines: z.array(ZOrderLine),
      total: z.number().int(),
      currency: ZCurrencyOfAmount,
    })
    .nullable(),
  /** The order's refunds, oldest first, each with its refund receipt once issued. */
  refunds: z.array(
    z.object({
      id: z.string(),
      /** Integer minor units of `currency`. */
      amountMinor: z.number().int(),
      currency: ZCurrencyOfAmount,
      reason: z.string(),
      status: z.enum(REFUND_STATUSES),
      createdAt: z.string(),
      receiptNumber: z.string().nullable(),
    }),
  ),
  /** What has been refunded (succeeded refunds), in minor units. */
  refundedMinor: z.number().int(),
}).meta({ id: "Order" });

// `id` as on the REST path; `orderId` (as in the admin API) is accepted too. The cast only
// restores the input type for tRPC callers, which a preprocess step would widen to unknown.
const ZOrderRef = z.preprocess(
  (v) => (v && typeof v === "object" && "orderId" in v && !("id" in v) ? { id: v.orderId } : v),
  z.object({ id: z.uuid() }),
) as unknown as z.ZodType<{ id: string }, { id: string } | { orderId: string }>;

export const ZOrderHistoryInput = z.object({
  limit: z.number().int().min(1).max(ORDER_HISTORY_MAX_PAGE).default(10),
  /** `nextCursor` of the page before; none for the newest orders. */
  cursor: z.string().max(200).nullish(),
});

export const ZOrderHistory = z.object({
  orders: z.array(
    z.object({
      id: z.string(),
      createdAt: z.string(),
      status: z.string(),
      paymentStatus: z.string().nullable(),
      /** Integer minor units of `currency`. */
      total: z.number().int(),
      currency: ZCurrencyOfAmount,
      itemCount: z.number().int(),
    }),
  ),
  nextCursor: z.string().nullable(),
});

export const ordersRouter = router({
  /** The signed-in customer's orders, newest first, a page at a time (the account page's history). */
  history: authedProcedure
    .input(ZOrderHistoryInput)
    .output(ZOrderHistory)
    .query(async ({ ctx, input }) => {
      const page = await listOrdersOfAccount(ctx.prisma, ctx.account.id, input);
      return {
        orders: page.orders.map(({ totalMinor, createdAt, ...o }) => ({
          ...o,
          createdAt: createdAt.toISOString(),
          total: totalMinor,
        })),
        nextCursor: page.nextCursor,
      };
    }),
  create: authedProcedure
    .use(limitedBy("ordersByAccount"))
    .meta({
      openapi: {
        method: "POST",
        path: "/orders",
        tags: ["orders"],
        summary: "Create an order, priced by the server from the catalogue",
        errorResponses: {
          400: "Invalid items, an unknown SKU, or items in more than one currency (an order is in one).",
          401: "No valid Bearer API key.",
          403: "The API key is read-only.",
          422: "The total is not an amount Stripe takes in its currency (`amount-invalid-for-currency`: below the minimum charge, above the maximum).",
          429: "Too many orders for this account: retry after `Retry-After` seconds.",
        },
      },
    })
    .input(ZCreateOrder)
    .output(ZOrderCreated)
    .mutation(async ({ ctx, input }) => {
      const order = await createOrder(ctx.prisma, ctx.account.id, input.items);
      const view = orderView(order);
      return {
        id: view.id,
        total: view.total,
        currency: view.currency,
        status: view.status,
        items: view.items,
      };
    }),
  get: authedProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/orders/{id}",
        tags: ["orders"],
        summary: "An order of yours, with its payment, receipt and refunds",
        errorResponses: {
          400: "The id is not a UUID.",
          401: "No valid Bearer API key.",
          404: "No such order.",
        },
      },
    })
    .input(ZOrderRef)
    .output(ZOrder)
    .query(async ({ ctx, input }) => {
      const order = await getOrderForAccount(ctx.prisma, ctx.account.id, input.id);
      const [own, receipts] = await Promise.all([
        refundsOfOrder(ctx.prisma, order.id),
        refundReceiptNumbers(ctx.prisma, order.id),
      ]);
      const refunds = own.map(({ id, amountMinor, currency, reason, status, createdAt }) => ({
        ...{ id, amountMinor, currency, reason, status, createdAt },
        receiptNumber: receipts.get(id) ?? null,
      }));
      // Issued by the receipts service shortly after the payment succeeds: null until it arrives.
      return {
        ...orderView(order),
        receipt: order.receipt ? receiptView(order.receipt) : null,
        refunds,
        refundedMinor: refunds.filter((r) => r.status === "succeeded").reduce((n, r) => n + r.amountMinor, 0),
      };
    }),
});
