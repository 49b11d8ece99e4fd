import { randomUUID } from "node:crypto";
import type { Tx } from "../db";

/** The house accounts of one currency; created on first use for currencies beyond the seeded one. */
const HOUSE_ACCOUNTS = [
  { code: "provider_clearing", name: "Provider clearing (owed to us by the provider)", normalSide: "debit" },
  { code: "merchant_revenue", name: "Merchant revenue", normalSide: "credit" },
] as const;

async function houseAccountIds(tx: Tx, currency: string): Promise<Record<string, number>> {
  // Insert only what is missing: ON CONFLICT DO NOTHING would still burn a sequence value.
  const existing = await tx.ledgerAccount.count({
    where: { currency, code: { in: HOUSE_ACCOUNTS.map((a) => a.code) } },
  });
  for (const a of existing === HOUSE_ACCOUNTS.length ? [] : HOUSE_ACCOUNTS) {
    await tx.$executeRaw`
      INSERT INTO ledger_accounts (code, name, currency, normal_side)
      VALUES (${a.code}, ${a.name}, ${currency}, ${a.normalSide})
      ON CONFLICT (code, currency) DO NOTHING`;
  }
  // Locked in id order, so concurrent postings queue instead of deadlocking.
  const rows = await tx.$queryRaw<{ id: number; code: string }[]>`
    SELECT id, code FROM ledger_accounts WHERE currency = ${currency} ORDER BY id FOR UPDATE`;
  return Object.fromEntries(rows.map((r) => [r.code, r.id]));
}

export interface PaymentCapture {
  paymentId: string;
  amountMinor: number;
  currency: string;
  description: string;
}

/**
 * Books a captured payment as one balanced ledger transaction: the provider owes us the amount
 * (debit clearing) and we earned it (credit revenue). The database checks the balance at commit
 * and refuses a second booking of the same payment.
 */
export async function postPaymentCapture(tx: Tx, capture: PaymentCapture): Promise<string> {
  const accounts = await houseAccountIds(tx, capture.currency);
  const transactionId = randomUUID();
  await tx.ledgerTransaction.create({
    data: {
      id: transactionId,
      paymentId: capture.paymentId,
      kind: "payment_capture",
      description: capture.description,
      entries: {
        create: [
          {
            ledgerAccountId: accounts.provider_clearing as number,
            paymentId: capture.paymentId,
            entryType: "provider_clearing",
            amountMinor: BigInt(capture.amountMinor),
            currency: capture.currency,
          },
          {
            ledgerAccountId: accounts.merchant_revenue as number,
            paymentId: capture.paymentId,
            entryType: "revenue",
            amountMinor: BigInt(-capture.amountMinor),
            currency: capture.currency,
          },
        ],
      },
    },
  });
  return transactionId;
}
