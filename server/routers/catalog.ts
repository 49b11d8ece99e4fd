import { z } from "zod";
import { ZCurrencyOfAmount } from "../../shared/currency";
import { publicProcedure, router } from "../trpc";

export const ZProduct = z
  .object({
    sku: z.string(),
    name: z.string(),
    /** Integer minor units of `currency`. */
    price: z.number().int(),
    currency: ZCurrencyOfAmount,
  })
  .meta({ id: "Product" });

export const catalogRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/products",
        tags: ["products"],
        summary: "The catalogue (public)",
        protect: false,
        errorResponses: {},
      },
    })
    .output(z.array(ZProduct))
    .query(async ({ ctx }) => {
      const products = await ctx.prisma.product.findMany({ orderBy: { sku: "asc" } });
      return products.map((p) => ({
        sku: p.sku,
        name: p.name,
        price: p.priceMinor,
        currency: p.currency,
      }));
    }),
});
