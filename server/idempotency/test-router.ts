import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createCallerFactory, idempotentProcedure, router } from "../trpc";

/**
 * Procedures used only by the idempotency tests: a handler that counts its runs per key, can be
 * made slow, fail or hang, and writes a business row inside the fenced completion transaction.
 */
export const ZTestInput = z.object({
  amount: z.number().int(),
  note: z.string(),
  sleepMs: z.number().int().min(0).default(0),
  fail: z.enum(["none", "unexpected", "business"]).default("none"),
  traceId: z.string().optional(),
});

export const runs = new Map<string, number>();
export const hooks: { beforeComplete?: (key: string) => Promise<void> } = {};

export const testRouter = router({
  effect: idempotentProcedure(ZTestInput, { fields: ["amount", "note"], leaseSeconds: 2 }).mutation(
    async ({ ctx, input }) => {
      const key = ctx.idempotencyKey;
      runs.set(`${ctx.account.id}/${key}`, (runs.get(`${ctx.account.id}/${key}`) ?? 0) + 1);
      if (input.sleepMs) await new Promise((r) => setTimeout(r, input.sleepMs));
      if (input.fail === "unexpected") throw new Error("boom");
      if (input.fail === "business") {
        throw new TRPCError({ code: "PAYMENT_REQUIRED", message: "Declined by the test handler." });
      }
      return ctx.idempotency.complete(async (tx) => {
        const id = crypto.randomUUID();
        await tx.$executeRaw`INSERT INTO idem_test_effects (id, account_id, key, amount) VALUES (${id}::uuid, ${ctx.account.id}::uuid, ${key}, ${input.amount})`;
        await hooks.beforeComplete?.(key);
        return { effectId: id, amount: input.amount, note: input.note, at: new Date() };
      });
    },
  ),
  plain: idempotentProcedure(z.object({ n: z.number() })).mutation(({ input }) => ({ doubled: input.n * 2 })),
});

export const createTestCaller = createCallerFactory(testRouter);

export const EFFECTS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS idem_test_effects (
  id uuid PRIMARY KEY, account_id uuid NOT NULL, key text NOT NULL, amount int NOT NULL)`;
