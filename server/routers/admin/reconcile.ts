import { z } from "zod";
import { ZReconciliationReport } from "../../admin/schemas";
import { domainErrors } from "../../errors";
import { paymentProvider } from "../../provider";
import { latestReconciliation, resolveByOperator, runReconciliation } from "../../reconciler";
import { adminProcedure, operatorProcedure, router } from "../../trpc";
import { audited } from "./audited";

export const ZRunReconciliation = z
  .object({
    windowStart: z.iso.datetime({ offset: true }).optional(),
    graceSeconds: z.number().int().min(0).max(86_400).optional(),
  })
  .prefault({});

export const adminReconcileRouter = router({
  run: operatorProcedure
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
  /** Closes an open mismatch that an operator settled by hand; recorded with who and why. */
  resolve: operatorProcedure
    .input(z.object({ id: z.string().regex(/^\d{1,18}$/), note: z.string().trim().min(1).max(1000) }))
    .output(z.object({ resolved: z.literal(true) }))
    .mutation(({ ctx, input }) =>
      audited(ctx, "reconcile.resolve", `mismatch ${input.id}`, async () => {
        if (!(await resolveByOperator(ctx.prisma, BigInt(input.id), ctx.adminActor, input.note)))
          throw domainErrors.notFound("Open mismatch");
        return { resolved: true as const };
      }),
    ),
});
