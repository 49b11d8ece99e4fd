import {
  listOrders,
  listPayments,
  listRefunds,
  ZListSearch,
  ZOrderPage,
  ZPaymentPage,
  ZRefundPage,
} from "../../admin/lists";
import { adminProcedure } from "../../trpc";

/** The console's searchable lists (decision 0201); reads, so any role. */
export const listPaymentsProcedure = adminProcedure
  .input(ZListSearch)
  .output(ZPaymentPage)
  .query(({ ctx, input }) => listPayments(ctx.prisma, input));

export const listOrdersProcedure = adminProcedure
  .input(ZListSearch)
  .output(ZOrderPage)
  .query(({ ctx, input }) => listOrders(ctx.prisma, input));

export const listRefundsProcedure = adminProcedure
  .input(ZListSearch)
  .output(ZRefundPage)
  .query(({ ctx, input }) => listRefunds(ctx.prisma, input));
