import { z } from "zod";
import { listAdminAudit } from "../../admin/audit";
import { endAdminSession, listAdminSessions } from "../../auth/admin-sessions";
import { env } from "../../env";
import { domainErrors } from "../../errors";
import { adminProcedure, router } from "../../trpc";
import { audited } from "./audited";

const ZAdminSession = z.object({
  id: z.string(),
  operator: z.string().nullable(),
  operatorId: z.string().nullable(),
  address: z.string().nullable(),
  userAgent: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  live: z.boolean(),
  endedAt: z.string().nullable(),
  endedBy: z.string().nullable(),
});

/**
 * The console's sign-ins, which can be ended one by one (decision 0063): an owner ends anyone's,
 * anyone else only their own (decision 0200).
 */
export const adminSessionsRouter = router({
  list: adminProcedure
    .output(z.array(ZAdminSession))
    .query(({ ctx }) => listAdminSessions(ctx.prisma, env.ADMIN_TOKEN)),
  end: adminProcedure
    .input(z.object({ id: z.uuid() }))
    .output(z.object({ ended: z.literal(true) }))
    .mutation(({ ctx, input }) =>
      audited(ctx, "sessions.end", `admin session ${input.id}`, async () => {
        if (ctx.adminRole !== "owner") {
          const target = await ctx.prisma.adminSession.findUnique({
            where: { id: input.id },
            select: { operatorId: true },
          });
          const own = !!target?.operatorId && target.operatorId === ctx.principal.admin?.operatorId;
          if (!own) throw domainErrors.forbidden("Only an owner ends another person's session.");
        }
        if (!(await endAdminSession(ctx.prisma, input.id, ctx.adminActor)))
          throw domainErrors.notFound("Live admin session");
        return { ended: true as const };
      }),
    ),
});

const ZAuditEvent = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.string(),
  address: z.string().nullable(),
  action: z.string(),
  subject: z.string().nullable(),
  outcome: z.string(),
});

export const adminAuditRouter = router({
  list: adminProcedure.output(z.array(ZAuditEvent)).query(({ ctx }) => listAdminAudit(ctx.prisma)),
});
