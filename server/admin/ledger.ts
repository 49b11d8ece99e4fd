import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { TLedgerTransaction } from "./schemas";

const withEntries = {
  entries: { orderBy: { id: "asc" } },
} satisfies Prisma.LedgerTransactionInclude;

type TransactionWithEntries = Prisma.LedgerTransactionGetPayload<{ include: typeof withEntries }>;
type AccountNames = Map<number, { code: string; name: string }>;

/** The ledger's accounts by id: a handful of rows, never deleted (decision 0128: no relation). */
async function accountNames(prisma: Db): Promise<AccountNames> {
  const accounts = await prisma.ledgerAccount.findMany({ select: { id: true, code: true, name: true } });
  return new Map(accounts.map((a) => [a.id, { code: a.code, name: a.name }]));
}

function transactionView(t: TransactionWithEntries, accounts: AccountNames): TLedgerTransaction {
  return {
    id: t.id,
    paymentId: t.paymentId,
    kind: t.kind,
    description: t.description,
    createdAt: t.createdAt.toISOString(),
    entries: t.entries.map((e) => ({
      id: String(e.id),
      accountCode: accounts.get(e.ledgerAccountId)?.code ?? `#${e.ledgerAccountId}`,
      accountName: accounts.get(e.ledgerAccountId)?.name ?? `#${e.ledgerAccountId}`,
      entryType: e.entryType,
      amountMinor: Number(e.amountMinor),
      currency: e.currency,
    })),
  };
}

/** The newest ledger transactions, each with its entries. */
export async function recentLedgerTransactions(prisma: Db, limit: number): Promise<TLedgerTransaction[]> {
  const rows = await prisma.ledgerTransaction.findMany({
    // Ids are UUIDv7, in posting order: the primary key serves "newest first" (decision 0130).
    orderBy: { id: "desc" },
    take: limit,
    include: withEntries,
  });
  const accounts = await accountNames(prisma);
  return rows.map((t) => transactionView(t, accounts));
}

/** The ledger transactions of these payments, oldest first. */
export async function ledgerTransactionsOf(prisma: Db, paymentIds: string[]): Promise<TLedgerTransaction[]> {
  if (paymentIds.length === 0) return [];
  const rows = await prisma.ledgerTransaction.findMany({
    where: { paymentId: { in: paymentIds } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    include: withEntries,
  });
  const accounts = await accountNames(prisma);
  return rows.map((t) => transactionView(t, accounts));
}
