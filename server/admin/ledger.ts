import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { TLedgerTransaction } from "./schemas";

const withEntries = {
  entries: {
    orderBy: { id: "asc" },
    include: { ledgerAccount: { select: { code: true, name: true } } },
  },
} satisfies Prisma.LedgerTransactionInclude;

type TransactionWithEntries = Prisma.LedgerTransactionGetPayload<{ include: typeof withEntries }>;

function transactionView(t: TransactionWithEntries): TLedgerTransaction {
  return {
    id: t.id,
    paymentId: t.paymentId,
    kind: t.kind,
    description: t.description,
    createdAt: t.createdAt.toISOString(),
    entries: t.entries.map((e) => ({
      id: String(e.id),
      accountCode: e.ledgerAccount.code,
      accountName: e.ledgerAccount.name,
      entryType: e.entryType,
      amountMinor: Number(e.amountMinor),
      currency: e.currency,
    })),
  };
}

/** The newest ledger transactions, each with its entries. */
export async function recentLedgerTransactions(prisma: Db, limit: number): Promise<TLedgerTransaction[]> {
  const rows = await prisma.ledgerTransaction.findMany({
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
    include: withEntries,
  });
  return rows.map(transactionView);
}

/** The ledger transactions of these payments, oldest first. */
export async function ledgerTransactionsOf(prisma: Db, paymentIds: string[]): Promise<TLedgerTransaction[]> {
  if (paymentIds.length === 0) return [];
  const rows = await prisma.ledgerTransaction.findMany({
    where: { paymentId: { in: paymentIds } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    include: withEntries,
  });
  return rows.map(transactionView);
}
