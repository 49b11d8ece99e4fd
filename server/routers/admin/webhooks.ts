import { z } from "zod";
import { adminProcedure, router } from "../../trpc";
import { endpointBacklogs, webhookStats, ZEndpointBacklog } from "../../webhooks";

export const adminWebhooksRouter = router({
  /** Merchant webhooks: totals, and the endpoints that are behind, failing or disabled. */
  overview: adminProcedure
    .output(
      z.object({
        attempts: z.object({ succeeded: z.number().int(), failed: z.number().int() }),
        pending: z.number().int(),
        lagSeconds: z.number(),
        disabledEndpoints: z.number().int(),
        endpoints: z.array(ZEndpointBacklog),
      }),
    )
    .query(async ({ ctx }) => {
      const [stats, endpoints] = await Promise.all([webhookStats(ctx.prisma), endpointBacklogs(ctx.prisma)]);
      return { ...stats, endpoints };
    }),
});
