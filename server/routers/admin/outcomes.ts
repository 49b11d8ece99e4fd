import { OUTCOMES, outcomeTotals } from "@idempotent-checkout/idempotency/admin";
import { z } from "zod";
import { outcomeChart } from "../../admin/outcomes";
import { ZOutcomeChart } from "../../admin/schemas";
import { keyDb } from "../../keys";
import { adminProcedure, router } from "../../trpc";

export const adminOutcomesRouter = router({
  /** Per-minute counts from the shared counters, for the overview chart. */
  chart: adminProcedure
    .input(
      z
        .object({
          minutes: z.number().int().min(5).max(180).default(60),
          /** One procedure's outcomes (e.g. "refunds.create"); all summed when omitted. */
          procedure: z.string().min(1).max(100).optional(),
        })
        .prefault({}),
    )
    .output(ZOutcomeChart)
    .query(({ ctx, input }) => outcomeChart(ctx.prisma, input.minutes, { procedure: input.procedure })),
  totals: adminProcedure
    .output(z.record(z.enum(OUTCOMES), z.number().int()))
    .query(({ ctx }) => outcomeTotals(keyDb(ctx.prisma))),
});
