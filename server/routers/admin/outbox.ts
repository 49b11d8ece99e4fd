import { z } from "zod";
import { outboxStats } from "../../outbox/stats";
import { adminProcedure, router } from "../../trpc";

export const adminOutboxRouter = router({
  /** How far the relay is behind, and how many messages the receipts consumer has processed. */
  stats: adminProcedure
    .output(
      z.object({
        pending: z.number().int(),
        sent: z.number().int(),
        oldestPendingAgeSeconds: z.number().int().nullable(),
        failing: z.number().int(),
        processed: z.number().int(),
      }),
    )
    .query(({ ctx }) => outboxStats(ctx.prisma)),
});
