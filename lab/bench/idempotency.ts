/**
 * `npm run bench`: what the idempotency layer costs, as ratios measured side by side in one run
 * (these machines are shared and noisy, so absolute times mean little). The same business write
 * runs as a plain mutation, as a fresh idempotent request, and as a replay; the three are
 * interleaved so that background load hits them alike.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { startDatabase } from "../../scripts/lib/embedded-pg";
import type { Tx } from "../../server/db";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const database = await startDatabase({ instance: "test" });
process.env.DATABASE_URL = database.url;
const { applyMigrations } = await import("../../server/db/migrate");
await applyMigrations(database.url);
const { closeDb, db } = await import("../../server/db");
const { authedProcedure, createCallerFactory, idempotentProcedure, router } = await import(
  "../../server/trpc"
);
const { contextFor, createTestAccount } = await import("../../server/test/fixtures");
const { replayable } = (await import("../../server/keys")).idempotency;

await db().$executeRawUnsafe(
  "CREATE TABLE IF NOT EXISTS bench_effects (id uuid PRIMARY KEY, account_id uuid NOT NULL, amount int NOT NULL)",
);
const ZInput = z.object({ amount: z.number().int() });
const write = (tx: Tx, accountId: string, amount: number) =>
  tx.$executeRaw`INSERT INTO bench_effects (id, account_id, amount) VALUES (${randomUUID()}::uuid, ${accountId}::uuid, ${amount})`;

const benchRouter = router({
  plain: authedProcedure.input(ZInput).mutation(({ ctx, input }) =>
    ctx.prisma.$transaction(async (tx) => {
      await write(tx, ctx.account.id, input.amount);
      return { amount: input.amount };
    }),
  ),
  idempotent: idempotentProcedure(ZInput, { procedure: "bench.idempotent" }).mutation(
    replayable(({ ctx, input }) =>
      ctx.idempotency.complete(async (tx) => {
        await write(tx, ctx.account.id, input.amount);
        return { amount: input.amount };
      }),
    ),
  ),
});
const caller = createCallerFactory(benchRouter);
const account = await createTestAccount("bench");

const timings = { plain: [] as number[], fresh: [] as number[], replay: [] as number[] };
async function time(bucket: number[], fn: () => Promise<unknown>) {
  const t0 = performance.now();
  await fn();
  bucket.push(performance.now() - t0);
}
for (let i = 0; i < ROUNDS + 20; i++) {
  const key = randomUUID();
  const warm = i < 20;
  const target = (b: number[]) => (warm ? [] : b);
  await time(target(timings.plain), () => caller(contextFor(account)).plain({ amount: i }));
  await time(target(timings.fresh), () =>
    caller(contextFor(account, { "idempotency-key": key })).idempotent({ amount: i }),
  );
  await time(target(timings.replay), () =>
    caller(contextFor(account, { "idempotency-key": key })).idempotent({ amount: i }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] as number;
const base = median(timings.plain);
console.log(`rounds: ${ROUNDS} (interleaved; medians, p95 in ms)`);
for (const [name, xs] of Object.entries(timings)) {
  console.log(
    `${name.padEnd(7)} median ${median(xs).toFixed(2).padStart(6)}  p95 ${p95(xs).toFixed(2).padStart(6)}  ratio to plain ${(median(xs) / base).toFixed(2)}`,
  );
}
await closeDb();
await database.stop();
