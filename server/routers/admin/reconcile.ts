import { z } from "zod";
import { ZReconciliationReport } from "../../admin/schemas";
import { paymentProvider } from "../../payments/provider";
import { latestReconciliation, runReconciliation } from "../../payments/reconciler";
import { adminProcedure, router } from "../../trpc";
import { audited } from "./audited";

export const ZRunReconciliation = z
  .object({
    windowStart: z.iso.datetime({ offset: true }).optional(),
    graceSeconds: z.number().int().min(0).max(86_400).optional(),
  })
  .prefault({});

export const adminReconcileRouter = router({
  run: adminProcedure
    .input(ZRunReconciliation)
    .output(ZReconciliationReport)
    .mutation(({ ctx, input }) =>
      audited(
        ctx,
        "reconcile.run",
        null,
        () =>
          runReconciliation(
            { prisma: ctx.prisma, provider: ctx.provider ?? paymentProvider() },
            {
              ...(input.windowStart ? { windowStart: new Date(input.windowStart) } : {}),
              ...(input.graceSeconds !== undefined ? { graceSeconds: input.graceSeconds } : {}),
            },
          ),
        (report) => `ok: ${report.mismatches.length} mismatches`,
      ),
    ),
  latest: adminProcedure
    .output(ZReconciliationReport.nullable())
    .query(({ ctx }) => latestReconciliation(ctx.prisma)),
});
