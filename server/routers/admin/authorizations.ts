import { z } from "zod";
import { listAuthorizations, ZAuthorization } from "../../admin/authorizations";
import { adminProcedure, router } from "../../trpc";

/** The operators' list of holds awaiting capture or cancel. */
export const adminAuthorizationsRouter = router({
  list: adminProcedure
    .input(z.object({ limit: z.number().int().min(1).max(500).default(100) }))
    .output(z.array(ZAuthorization))
    .query(({ ctx, input }) => listAuthorizations(ctx.prisma, input.limit)),
});
