import { MAX_KEY_LENGTH } from "@idempotent-checkout/idempotency/admin";
import { z } from "zod";
import { countKeysByState, findKey, getKeyDetail, listKeys } from "../../admin/keys";
import { ZInt8Id, ZKeyDetail, ZKeyPage, ZKeyState, ZKeyStateCounts } from "../../admin/schemas";
import type { Context } from "../../context";
import { domainErrors } from "../../errors";
import { operationOf } from "../../money-operations";
import { completerOptions } from "../../operation";
import { paymentProvider } from "../../provider";
import { adminProcedure, operatorProcedure, router } from "../../trpc";
import { audited } from "./audited";
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

const ZRedrive = z.object({ outcome: z.enum(["settled", "failed", "busy"]), key: ZKeyDetail });

/** The key row's id, or the account and the key the client sent. */
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
  /**
   * "Re-drive now": runs the completer's path on one unfinished key at once, whatever its backoff,
   * and answers the key as it then stands. Recorded in the key's history.
   */
  redrive: operatorProcedure
    .input(z.object({ id: ZInt8Id }))
    .output(ZRedrive)
    .mutation(({ ctx, input }) =>
      audited(
        ctx,
        "keys.redrive",
        `idempotency key ${input.id}`,
        () => redrive(ctx, input.id),
        (r) => r.outcome,
      ),
    ),
});

async function redrive(ctx: Context, rowId: string) {
  const id = BigInt(rowId);
  const provider = ctx.provider ?? paymentProvider();
  const procedure = (await findKey(ctx.prisma, { id }))?.procedure;
  // Each key is driven by its own operation's phases.
  const operation = operationOf(procedure);
  const outcome = await operation.redrive({ prisma: ctx.prisma, provider }, id, {
    ...completerOptions(),
    by: "admin",
  });
  if (outcome === "not_found") {
    const key = await getKeyDetail(ctx.prisma, chargeLookups(ctx), { id });
    if (!key) throw domainErrors.notFound("Idempotency key");
    throw domainErrors.invalid("This key is finished: there is nothing to re-drive.");
  }
  if (outcome === "not_started") {
    throw domainErrors.invalid(
      "No attempt of this key began its work (no payment or refund exists, nothing was sent): there is nothing to re-drive. The client's retry may still run it; otherwise it expires.",
      { reason: "not_started" },
    );
  }
  const key = await getKeyDetail(ctx.prisma, chargeLookups(ctx), { id });
  if (!key) throw domainErrors.notFound("Idempotency key");
  return { outcome, key };
}
