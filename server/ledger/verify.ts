import type { Db } from "../db";

export interface LedgerCheck {
  balanced: boolean;
  /** Sum of all entries per currency: zero in a sound ledger. */
  totals: { currency: string; sumMinor: number }[];
  unbalancedTransactions: { transactionId: string; sumMinor: number }[];
  transactions: number;
  entries: number;
}

/** A live check of the books, computed from the entries themselves. */
export async function verifyLedger(prisma: Db): Promise<LedgerCheck> {
  const totals = await prisma.$queryRaw<{ currency: string; sum: bigint }[]>`
    SELECT currency, coalesce(sum(amount_minor), 0)::bigint AS sum FROM ledger_entries GROUP BY currency ORDER BY currency`;
  const unbalanced = await prisma.$queryRaw<{ transaction_id: string; sum: bigint }[]>`
    SELECT transaction_id::text, sum(amount_minor)::bigint AS sum FROM ledger_entries
     GROUP BY transaction_id HAVING sum(amount_minor) <> 0 LIMIT 100`;
  const [counts] = await prisma.$queryRaw<{ transactions: bigint; entries: bigint }[]>`
    SELECT (SELECT count(*) FROM ledger_transactions) AS transactions, (SELECT count(*) FROM ledger_entries) AS entries`;
  const result: LedgerCheck = {
    balanced: false,
    totals: totals.map((t) => ({ currency: t.currency, sumMinor: Number(t.sum) })),
    unbalancedTransactions: unbalanced.map((u) => ({
      transactionId: u.transaction_id,
      sumMinor: Number(u.sum),
    })),
    transactions: Number(counts?.transactions ?? 0),
    entries: Number(counts?.entries ?? 0),
  };
  result.balanced =
    result.totals.every((t) => t.sumMinor === 0) && result.unbalancedTransactions.length === 0;
  return result;
}

/**
 * Every account's balances, each in the account's normal direction (decision 0015), as Modern
 * Treasury reports them: `balanceMinor` the posted entries; `pendingMinor` the open holds (the pending
 * entries net: a hold less its release, so an authorization not yet captured or released);
 * `availableMinor` the posted balance less open holds against the normal side (what no open hold
 * can take away; the house accounts' holds are all towards it, so it is their posted balance).
 */
export async function ledgerBalances(prisma: Db) {
  const rows = await prisma.$queryRaw<
    {
      code: string;
      name: string;
      currency: string;
      normal_side: string;
      balance: bigint;
      pending: bigint;
    }[]
  >`
    SELECT a.code, a.name, a.currency, a.normal_side,
           coalesce(sum(n.amount) FILTER (WHERE NOT e.pending), 0)::bigint AS balance,
           coalesce(sum(n.amount) FILTER (WHERE e.pending), 0)::bigint AS pending
      FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.ledger_account_id = a.id
      LEFT JOIN LATERAL (SELECT CASE WHEN a.normal_side = 'debit' THEN e.amount_minor ELSE -e.amount_minor END AS amount) n ON true
     GROUP BY a.id ORDER BY a.currency, a.code`;
  return rows.map((a) => ({
    code: a.code,
    name: a.name,
    currency: a.currency,
    normalSide: a.normal_side,
    balanceMinor: Number(a.balance),
    pendingMinor: Number(a.pending),
    availableMinor: Number(a.balance) + Math.min(0, Number(a.pending)),
  }));
}
