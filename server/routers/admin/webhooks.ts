import { z } from "zod";
import { adminProcedure, router } from "../../trpc";
import { endpointBacklogs, webhookStats } from "../../webhooks";

export const adminWebhooksRouter = router({
  /** Merchant webhooks: totals, and the endpoints that are behind, failing or disabled. */
  overview: adminProcedure
    .output(
      z.object({
        attempts: z.object({ succeeded: z.number().int(), failed: z.number().int() }),
        pending: z.number().int(),
        lagSeconds: z.number(),
        disabledEndpoints: z.number().int(),
        endpoints: z.array(
          z.object({
            endpointId: z.string(),
            accountId: z.string(),
            url: z.string(),
            disabledReason: z.string().nullable(),
            pending: z.number().int(),
            failed: z.number().int(),
            lagSeconds: z.number().int(),
          }),
        ),
      }),
    )
    .query(async ({ ctx }) => {
      const [stats, endpoints] = await Promise.all([webhookStats(ctx.prisma), endpointBacklogs(ctx.prisma)]);
      return { ...stats, endpoints };
    }),
});
