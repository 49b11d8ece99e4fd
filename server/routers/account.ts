import { z } from "zod";
import { authedProcedure, router } from "../trpc";

export const accountRouter = router({
  me: authedProcedure
    .output(z.object({ id: z.string(), handle: z.string(), name: z.string() }))
    .query(({ ctx }) => ctx.account),
});
