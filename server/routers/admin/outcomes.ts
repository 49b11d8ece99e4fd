import { z } from "zod";
import { outcomeChart } from "../../admin/outcomes";
import { ZOutcomeChart } from "../../admin/schemas";
import { OUTCOMES, outcomeTotals } from "../../keys";
import { adminProcedure, router } from "../../trpc";

export const adminOutcomesRouter = router({
  /** Per-minute counts from the shared counters, for the overview chart. */
  chart: adminProcedure
    .input(z.object({ minutes: z.number().int().min(5).max(180).default(60) }).prefault({}))
    .output(ZOutcomeChart)
    .query(({ ctx, input }) => outcomeChart(ctx.prisma, input.minutes)),
  totals: adminProcedure
    .output(z.record(z.enum(OUTCOMES), z.number().int()))
    .query(({ ctx }) => outcomeTotals(ctx.prisma)),
});
