import pg from "pg";
import { type Charge, httpProvider } from "../../provider/client";
import type { Mismatch } from "../../server/payments/reconcile-checks";

/** A payment of ours with its key and its ledger, read straight from PostgreSQL. */
export interface OurPayment {
  id: string;
  orderId: string;
  accountId: string;
  status: string;
  failureCode: string | null;
  providerChargeId: string | null;
  createdAt: number;
  keyId: string | null;
  key: string | null;
  clearingEntries: number;
}

export interface Report {
  providerError: string | null;
  mismatches: Mismatch[];
}

/** The provider's books and ours at the end of a run, and the reconciler's reports. */
export interface Books {
  charges: Charge[];
  payments: OurPayment[];
  unbalancedCurrencies: { currency: string; sum: string }[];
  unbalancedTransactions: { transactionId: string; sum: string }[];
  /** After the drain, with the provider reachable. */
  reportAfterDrain: Report | null;
  /** After a run without the provider, the next run that listed only a narrow window. */
  reportAfterOutage: Report | null;
  /** What the admin shows for each payment still pending: its key's state. */
  pendingKeyStates: Map<string, string>;
}

export async function readProviderCharges(providerUrl: string): Promise<Charge[]> {
  const charges: Charge[] = [];
  for await (const c of httpProvider({ baseUrl: providerUrl }).listCharges()) charges.push(c);
  return charges;
}

export async function readOurBooks(databaseUrl: string) {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const payments = await client.query<OurPayment & { createdAt: Date }>(`
      SELECT p.id::text, p.order_id::text AS "orderId", p.account_id::text AS "accountId", p.status,
             p.failure_code AS "failureCode", p.provider_charge_id AS "providerChargeId",
             p.created_at AS "createdAt", k.id::text AS "keyId", k.key,
             (SELECT count(*)::int FROM ledger_entries e
               WHERE e.payment_id = p.id AND e.entry_type = 'provider_clearing') AS "clearingEntries"
        FROM payments p LEFT JOIN idempotency_keys k ON k.id = p.idempotency_key_id`);
    const currencies = await client.query<{ currency: string; sum: string }>(
      "SELECT currency, sum(amount_minor)::text AS sum FROM ledger_entries GROUP BY currency HAVING sum(amount_minor) <> 0",
    );
    const transactions = await client.query<{ transactionId: string; sum: string }>(
      `SELECT transaction_id::text AS "transactionId", sum(amount_minor)::text AS sum FROM ledger_entries
        GROUP BY transaction_id HAVING sum(amount_minor) <> 0`,
    );
    return {
      payments: payments.rows.map((p) => ({ ...p, createdAt: p.createdAt.getTime() })),
      unbalancedCurrencies: currencies.rows,
      unbalancedTransactions: transactions.rows,
    };
  } finally {
    await client.end();
  }
}

/** How many payments are still pending (the drain waits for none). */
export async function countPending(databaseUrl: string): Promise<number> {
  const client = new pg.Client(databaseUrl);
  try {
    await client.connect();
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM payments WHERE status = 'pending'",
    );
    return rows[0]?.n ?? 0;
  } catch {
    return -1;
  } finally {
    await client.end().catch(() => {});
  }
}
