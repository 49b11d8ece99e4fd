import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { Db } from "../db";
import { idempotency } from "../keys";

const { replayable } = idempotency;

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
export const hooks: {
  beforeComplete?: (key: string) => Promise<void>;
  /** Runs inside `phased`'s first atomic phase, after its business row and before its recovery point. */
  insidePhase?: (key: string) => Promise<void>;
  /** The admission check of `admitted`: throws to refuse, may be slow. */
  admit?: (key: string) => Promise<void>;
} = {};

export const testRouter = router({
  effect: idempotentProcedure(ZTestInput, {
    procedure: "effect",
    fields: ["amount", "note"],
    leaseSeconds: 2,
  }).mutation(
    replayable(async ({ ctx, input }) => {
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
    }),
  ),
  /** Two steps: an atomic phase writes the business row, the fenced completion reads it back. */
  phased: idempotentProcedure(ZTestInput, {
    procedure: "phased",
    fields: ["amount", "note"],
    leaseSeconds: 2,
  }).mutation(
    replayable(async ({ ctx, input }) => {
      const key = ctx.idempotencyKey;
      runs.set(`${ctx.account.id}/${key}`, (runs.get(`${ctx.account.id}/${key}`) ?? 0) + 1);
      if (ctx.idempotency.recoveryPoint === "started") {
        await ctx.idempotency.atomicPhase("effect_written", async (tx) => {
          await tx.$executeRaw`INSERT INTO idem_test_effects (id, account_id, key, amount) VALUES (${crypto.randomUUID()}::uuid, ${ctx.account.id}::uuid, ${key}, ${input.amount})`;
          await hooks.insidePhase?.(key);
        });
      }
      // Fails after the phase committed, so the retry resumes from "effect_written".
      if (input.fail === "unexpected") throw new Error("boom after the phase");
      return ctx.idempotency.complete(async (tx) => {
        const rows = await tx.$queryRaw<{ id: string }[]>`
          SELECT id::text FROM idem_test_effects WHERE account_id = ${ctx.account.id}::uuid AND key = ${key}`;
        return { effectIds: rows.map((r) => r.id), amount: input.amount, note: input.note };
      });
    }),
  ),
  /** As `effect`, with an admission check the test controls (a slow or refusing limiter). */
  admitted: idempotentProcedure(ZTestInput, {
    procedure: "admitted",
    fields: ["amount", "note"],
    leaseSeconds: 1,
    admit: async (ctx) => hooks.admit?.((ctx as unknown as { idempotencyKey: string }).idempotencyKey),
  }).mutation(
    replayable(async ({ ctx, input }) => {
      const key = ctx.idempotencyKey;
      runs.set(`${ctx.account.id}/${key}`, (runs.get(`${ctx.account.id}/${key}`) ?? 0) + 1);
      return ctx.idempotency.complete(async (tx) => {
        await tx.$executeRaw`INSERT INTO idem_test_effects (id, account_id, key, amount) VALUES (${crypto.randomUUID()}::uuid, ${ctx.account.id}::uuid, ${key}, ${input.amount})`;
        return { amount: input.amount, note: input.note };
      });
    }),
  ),
  plain: idempotentProcedure(z.object({ n: z.number() }), { procedure: "plain" }).mutation(
    replayable(({ input }) => ({ doubled: input.n * 2 })),
  ),
});

export const createTestCaller = createCallerFactory(testRouter);

export const EFFECTS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS idem_test_effects (
  id uuid PRIMARY KEY, account_id uuid NOT NULL, key text NOT NULL, amount int NOT NULL)`;

/**
 * Creates the effects table. Test files run in parallel, and two concurrent CREATE TABLE IF NOT
 * EXISTS can collide on the catalog (a unique violation); the loser's retry then sees the table.
 */
export async function ensureEffectsTable(prisma: Db): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await prisma.$executeRawUnsafe(EFFECTS_TABLE_SQL);
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
