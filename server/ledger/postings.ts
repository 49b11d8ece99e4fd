import { type Cte, requirement, type Sql, StatementBuilder, sql } from "@idempotent-checkout/idempotency/sql";
import { isCurrencyCode } from "../../shared/currency";
import { type Db, newId, rawQuery, type Tx } from "../db";

/** The house accounts of one currency; created on first use for currencies beyond the seeded one. */
const HOUSE_ACCOUNTS = [
  { code: "provider_clearing", name: "Provider clearing (owed to us by the provider)", normalSide: "debit" },
  { code: "merchant_revenue", name: "Merchant revenue", normalSide: "credit" },
] as const;

export interface PaymentCapture {
  paymentId: string;
  amountMinor: number;
  currency: string;
  description: string;
  /** The provider's charge captured: unique among captures, so a charge is booked once. */
  providerChargeId?: string;
}

/** Fails a capture whose currency has no house accounts yet (no leg could be written). */
export const HOUSE_ACCOUNTS_MISSING = requirement("ledger.house_accounts_missing");

/**
 * A captured payment as one balanced ledger transaction, added to the caller's statement as two
 * data-modifying CTEs and the requirement that both legs were written: the provider owes us the
 * amount (debit clearing) and we earned it (credit revenue). No account row is written or locked
 * (decision 0015); the database checks the balance at commit and refuses a second booking of the
 * same payment. With a currency's house accounts missing the statement raises
 * HOUSE_ACCOUNTS_MISSING (`isRequirementFailure`): create them, and run it again.
 */
export function paymentCapture(b: StatementBuilder, capture: PaymentCapture): { transactionId: string } {
  const transactionId = newId();
  const amount = BigInt(capture.amountMinor);
  twoLegs(
    b,
    sql`
        INSERT INTO ledger_transactions (id, payment_id, kind, description, provider_charge_id)
        VALUES (${transactionId}::uuid, ${capture.paymentId}::uuid, 'payment_capture', ${capture.description},
                ${capture.providerChargeId ?? null})
        RETURNING id`,
    (t) => sql`
        INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency)
        SELECT t.id, a.id, ${capture.paymentId}::uuid,
               CASE a.code WHEN 'provider_clearing' THEN 'provider_clearing' ELSE 'revenue' END,
               CASE a.code WHEN 'provider_clearing' THEN ${amount}::bigint ELSE -${amount}::bigint END,
               ${capture.currency}
          FROM ${t} t JOIN ledger_accounts a
            ON a.currency = ${capture.currency} AND a.code IN ('provider_clearing', 'merchant_revenue')
        RETURNING id`,
  );
  return { transactionId };
}

/**
 * A ledger transaction and its two legs on the house accounts, as two data-modifying CTEs, and the
 * requirement that both legs were written: HOUSE_ACCOUNTS_MISSING otherwise (a currency not set up).
 */
function twoLegs(b: StatementBuilder, transaction: Sql, legs: (transaction: Cte<"id">) => Sql): void {
  const written = b.cte<"id">(legs(b.cte<"id">(transaction, "ledger_tx")), "ledger_legs");
  b.require(sql`(SELECT count(*) FROM ${written}) = 2`, HOUSE_ACCOUNTS_MISSING);
}

export interface HoldPosting {
  paymentId: string;
  /** The amount held (the authorization), which a release returns in full. */
  amountMinor: number;
  currency: string;
  description: string;
}

/**
 * An authorization's hold as pending legs (TigerBeetle's pending transfer, Modern Treasury's
 * pending entries): the provider holds the amount for us, nothing is posted. One per payment.
 */
export function authorizationHold(b: StatementBuilder, hold: HoldPosting): { transactionId: string } {
  return pendingLegs(b, hold, "authorization_hold", "hold", 1n);
}

/**
 * The hold's release, once: `hold_captured` in the capture's statement, beside the posting of
 * what was captured (the database refuses a capture without it, or beyond the hold), or
 * `hold_voided` for a cancel or an expiry (after which no capture can be booked).
 */
export function holdRelease(
  b: StatementBuilder,
  hold: HoldPosting,
  kind: "hold_captured" | "hold_voided",
): { transactionId: string } {
  return pendingLegs(b, hold, kind, "release", -1n);
}

function pendingLegs(
  b: StatementBuilder,
  hold: HoldPosting,
  kind: string,
  prefix: "hold" | "release",
  sign: bigint,
): { transactionId: string } {
  const transactionId = newId();
  const amount = BigInt(hold.amountMinor) * sign;
  twoLegs(
    b,
    sql`
        INSERT INTO ledger_transactions (id, payment_id, kind, description)
        VALUES (${transactionId}::uuid, ${hold.paymentId}::uuid, ${kind}, ${hold.description})
        RETURNING id`,
    (t) => sql`
        INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, entry_type, amount_minor, currency, pending)
        SELECT t.id, a.id, ${hold.paymentId}::uuid,
               ${`${prefix}_`} || CASE a.code WHEN 'provider_clearing' THEN 'clearing' ELSE 'revenue' END,
               CASE a.code WHEN 'provider_clearing' THEN ${amount}::bigint ELSE -${amount}::bigint END,
               ${hold.currency}, true
          FROM ${t} t JOIN ledger_accounts a
            ON a.currency = ${hold.currency} AND a.code IN ('provider_clearing', 'merchant_revenue')
        RETURNING id`,
  );
  return { transactionId };
}

/**
 * Creates a currency's house accounts if missing; concurrent calls are harmless. Only in a
 * currency Stripe lists (shared/currency; the database checks the same list).
 */
export async function ensureHouseAccounts(db: Tx | Db, currency: string): Promise<void> {
  if (!isCurrencyCode(currency))
    throw new Error(`no ledger accounts in ${currency}: not a currency Stripe lists (shared/currency)`);
  for (const a of HOUSE_ACCOUNTS) {
    await db.$executeRaw`
      INSERT INTO ledger_accounts (code, name, currency, normal_side)
      SELECT ${a.code}, ${a.name}, ${currency}, ${a.normalSide}
       WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts WHERE code = ${a.code} AND currency = ${currency})
      ON CONFLICT (code, currency) DO NOTHING`;
  }
}

/** Books a capture on its own, in the caller's transaction (tests, tools). */
export async function postPaymentCapture(tx: Tx, capture: PaymentCapture): Promise<string> {
  await ensureHouseAccounts(tx, capture.currency);
  return bookCapture(tx, capture);
}

/** Books a capture as its own statement; HOUSE_ACCOUNTS_MISSING when its currency has none. */
export async function bookCapture(db: Tx | Db, capture: PaymentCapture): Promise<string> {
  const b = new StatementBuilder();
  const { transactionId } = paymentCapture(b, capture);
  await rawQuery(db, b.statement());
  return transactionId;
}

export interface RefundReversal {
  refundId: string;
  paymentId: string;
  amountMinor: number;
  currency: string;
  description: string;
}

/**
 * A refund as its own balanced ledger transaction, in the caller's transaction: the capture's two
 * legs reversed for the refund's amount (debit revenue, credit the provider clearing). The
 * database checks each leg against its refund and its payment's capture (so the reversals of a
 * payment never exceed it), the balance at commit, and one reversal per refund; no account row
 * is locked (decision 0111).
 */
export async function postRefundReversal(tx: Tx, reversal: RefundReversal): Promise<string> {
  const b = new StatementBuilder();
  const { transactionId } = refundReversal(b, reversal);
  await rawQuery(tx, b.statement());
  return transactionId;
}

/** The reversal's parts of a statement; HOUSE_ACCOUNTS_MISSING when its currency has none. */
export function refundReversal(b: StatementBuilder, reversal: RefundReversal): { transactionId: string } {
  const transactionId = newId();
  const amount = BigInt(reversal.amountMinor);
  twoLegs(
    b,
    sql`
        INSERT INTO ledger_transactions (id, payment_id, refund_id, kind, description)
        VALUES (${transactionId}::uuid, ${reversal.paymentId}::uuid, ${reversal.refundId}::uuid, 'refund_reversal',
                ${reversal.description})
        RETURNING id`,
    (t) => sql`
        INSERT INTO ledger_entries (transaction_id, ledger_account_id, payment_id, refund_id, entry_type, amount_minor, currency)
        SELECT t.id, a.id, ${reversal.paymentId}::uuid, ${reversal.refundId}::uuid,
               CASE a.code WHEN 'provider_clearing' THEN 'refund_clearing' ELSE 'refund_revenue' END,
               CASE a.code WHEN 'provider_clearing' THEN -${amount}::bigint ELSE ${amount}::bigint END,
               ${reversal.currency}
          FROM ${t} t JOIN ledger_accounts a
            ON a.currency = ${reversal.currency} AND a.code IN ('provider_clearing', 'merchant_revenue')
        RETURNING id`,
  );
  return { transactionId };
}
