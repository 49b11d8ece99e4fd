import { z } from "zod";
import { recentLedgerTransactions } from "../../admin/ledger";
import { ZLedgerBalance, ZLedgerCheck, ZLedgerTransaction } from "../../admin/schemas";
import { ledgerBalances, verifyLedger } from "../../ledger";
import { adminProcedure, router } from "../../trpc";

export const adminLedgerRouter = router({
  /** A live check of the books: every entry sums to zero per currency and per transaction. */
  verify: adminProcedure.output(ZLedgerCheck).query(({ ctx }) => verifyLedger(ctx.prisma)),
  balances: adminProcedure.output(z.array(ZLedgerBalance)).query(({ ctx }) => ledgerBalances(ctx.prisma)),
  transactions: adminProcedure
    .input(z.object({ limit: z.number().int().min(1).max(100).default(20) }).prefault({}))
    .output(z.array(ZLedgerTransaction))
    .query(({ ctx, input }) => recentLedgerTransactions(ctx.prisma, input.limit)),
});
