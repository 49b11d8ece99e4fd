import { z } from "zod";
import {
  createOperator,
  listOperators,
  reissueOperatorSecret,
  removeOperator,
  setOperatorRole,
} from "../../auth/operators";
import { ADMIN_ROLES } from "../../auth/roles";
import { domainErrors } from "../../errors";
import { adminProcedure, ownerProcedure, router } from "../../trpc";
import { audited } from "./audited";

const ZRole = z.enum(ADMIN_ROLES);

export const ZOperator = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: ZRole,
  createdAt: z.string(),
  createdBy: z.string(),
  removedAt: z.string().nullable(),
  removedBy: z.string().nullable(),
  liveSessions: z.number().int(),
});

export const ZInviteOperator = z.object({
  email: z.email().max(254),
  name: z.string().trim().min(1).max(100),
  role: ZRole,
});

/** The console's people (decision 0200): everyone sees who they are; owners manage them. */
export const adminOperatorsRouter = router({
  list: adminProcedure.output(z.array(ZOperator)).query(({ ctx }) => listOperators(ctx.prisma)),
  /** Creates the operator and answers their sign-in secret, once: only its hash is kept. */
  invite: ownerProcedure
    .input(ZInviteOperator)
    .output(z.object({ operator: ZOperator, secret: z.string() }))
    .mutation(({ ctx, input }) =>
      audited(ctx, "operators.invite", `operator ${input.email.toLowerCase()} as ${input.role}`, async () => {
        const created = await createOperator(ctx.prisma, { ...input, createdBy: ctx.adminActor });
        if (!created.ok) throw domainErrors.conflict("An operator with this email exists.");
        return { operator: created.operator, secret: created.secret };
      }),
    ),
  setRole: ownerProcedure
    .input(z.object({ id: z.uuid(), role: ZRole }))
    .output(z.object({ role: ZRole }))
    .mutation(({ ctx, input }) =>
      audited(ctx, "operators.set_role", `operator ${input.id} to ${input.role}`, async () => {
        if (input.id === ctx.principal.admin?.operatorId)
          throw domainErrors.forbidden("An owner does not change their own role.");
        if (!(await setOperatorRole(ctx.prisma, input.id, input.role)))
          throw domainErrors.notFound("Operator");
        return { role: input.role };
      }),
    ),
  /** Removes the operator; every session of theirs ends in the same transaction. */
  remove: ownerProcedure
    .input(z.object({ id: z.uuid() }))
    .output(z.object({ removed: z.literal(true) }))
    .mutation(({ ctx, input }) =>
      audited(ctx, "operators.remove", `operator ${input.id}`, async () => {
        if (input.id === ctx.principal.admin?.operatorId)
          throw domainErrors.forbidden("An owner does not remove themselves.");
        if (!(await removeOperator(ctx.prisma, input.id, ctx.adminActor)))
          throw domainErrors.notFound("Operator");
        return { removed: true as const };
      }),
    ),
  /** A new secret for a lost one: the old one and every session made with it end. */
  reissue: ownerProcedure
    .input(z.object({ id: z.uuid() }))
    .output(z.object({ secret: z.string() }))
    .mutation(({ ctx, input }) =>
      audited(ctx, "operators.reissue", `operator ${input.id}`, async () => {
        const issued = await reissueOperatorSecret(ctx.prisma, input.id, ctx.adminActor);
        if (!issued) throw domainErrors.notFound("Operator");
        return issued;
      }),
    ),
});
