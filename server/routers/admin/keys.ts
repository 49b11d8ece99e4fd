import { z } from "zod";
import { countKeysByState, getKeyDetail, listKeys } from "../../admin/keys";
import { ZInt8Id, ZKeyDetail, ZKeyPage, ZKeyState, ZKeyStateCounts } from "../../admin/schemas";
import { domainErrors } from "../../errors";
import { MAX_KEY_LENGTH } from "../../idempotency";
import { adminProcedure, router } from "../../trpc";
import { chargeLookups } from "./charges";

export const ZListKeys = z
  .object({
    state: ZKeyState.optional(),
    accountId: z.uuid().optional(),
    accountHandle: z.string().min(1).max(100).optional(),
    search: z.string().min(1).max(MAX_KEY_LENGTH).optional(),
    cursor: z.string().min(1).max(100).optional(),
    limit: z.number().int().min(1).max(100).default(25),
  })
  .prefault({});

/** The key row's id (a string: it is a BigInt), or the account and the key the client sent. */
export const ZKeyRef = z.union([
  z.object({ id: ZInt8Id }),
  z.object({ accountId: z.uuid(), key: z.string().min(1).max(MAX_KEY_LENGTH) }),
]);

export const adminKeysRouter = router({
  list: adminProcedure
    .input(ZListKeys)
    .output(ZKeyPage)
    .query(({ ctx, input }) => listKeys(ctx.prisma, input)),
  get: adminProcedure
    .input(ZKeyRef)
    .output(ZKeyDetail)
    .query(async ({ ctx, input }) => {
      const ref = "id" in input ? { id: BigInt(input.id) } : input;
      const key = await getKeyDetail(ctx.prisma, chargeLookups(ctx), ref);
      if (!key) throw domainErrors.notFound("Idempotency key");
      return key;
    }),
  counts: adminProcedure.output(ZKeyStateCounts).query(({ ctx }) => countKeysByState(ctx.prisma)),
});
