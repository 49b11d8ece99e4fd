import { z } from "zod";
import { getOrderDetail } from "../../admin/orders";
import { ZOrderDetail } from "../../admin/schemas";
import { domainErrors } from "../../errors";
import { adminProcedure, router } from "../../trpc";
import { chargeLookups } from "./charges";
import { listOrdersProcedure } from "./lists";

export const adminOrdersRouter = router({
  list: listOrdersProcedure,
  get: adminProcedure
    .input(z.object({ orderId: z.uuid() }))
    .output(ZOrderDetail)
    .query(async ({ ctx, input }) => {
      const order = await getOrderDetail(ctx.prisma, chargeLookups(ctx), input.orderId);
      if (!order) throw domainErrors.notFound("Order");
      return order;
    }),
});
