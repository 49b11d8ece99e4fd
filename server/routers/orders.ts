import { z } from "zod";
import { createOrder, getOrderForAccount } from "../payments/orders";
import { orderView } from "../payments/views";
import { receiptView } from "../receipts";
import { authedProcedure, router } from "../trpc";

export const ZCreateOrder = z.object({
  items: z
    .array(z.object({ sku: z.string().min(1).max(64), quantity: z.number().int().min(1).max(99) }))
    .min(1)
    .max(50),
});

// `orderId` as in the admin API; `id` accepted too.
const ZOrderRef = z.union([z.object({ orderId: z.uuid() }), z.object({ id: z.uuid() })]);
const orderIdOf = (ref: z.infer<typeof ZOrderRef>) => ("orderId" in ref ? ref.orderId : ref.id);

export const ordersRouter = router({
  create: authedProcedure.input(ZCreateOrder).mutation(async ({ ctx, input }) => {
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
  get: authedProcedure.input(ZOrderRef).query(async ({ ctx, input }) => {
    const order = await getOrderForAccount(ctx.prisma, ctx.account.id, orderIdOf(input));
    // Issued by the receipts service shortly after the payment succeeds: null until it arrives.
    return { ...orderView(order), receipt: order.receipt ? receiptView(order.receipt) : null };
  }),
});
