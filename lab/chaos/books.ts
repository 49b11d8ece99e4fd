import pg from "pg";
import { type Charge, httpProvider, type Refund } from "../../server/provider";
import { EVENT_TYPES } from "../../server/provider-events";
import type { Mismatch } from "../../server/reconciler";
import type { WebhookBooks } from "./webhook-books";

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
  amountMinor: number;
  paymentMethod: string;
  captureMethod: string;
  capturedMinor: number | null;
  captureBefore: number | null;
  /** What the capture posted (provider_clearing legs), 0 before. */
  postedMinor: number;
  /** The hold's transactions (authorization_hold) and what its clearing legs hold. */
  holds: number;
  heldMinor: number;
  /** The hold's releases in order (hold_captured, hold_voided) and what their clearing legs return. */
  releases: string[];
  releasedMinor: number;
}

/** A capture or cancel of an authorization (authorization_actions). */
export interface OurAction {
  id: string;
  paymentId: string;
  kind: string;
  status: string;
  reason: string;
  amountMinor: number | null;
}

/** A 3-D Secure challenge at the provider (its own table): the intent and the shopper's answer. */
export interface ProviderChallenge {
  paymentIntent: string;
  outcome: string | null;
}

/** A refund of ours with its payment's capture and its reversal transactions. */
export interface OurRefund {
  id: string;
  paymentId: string;
  amountMinor: number;
  status: string;
  failureCode: string | null;
  providerRefundId: string | null;
  captured: number;
  providerChargeId: string | null;
  reversals: number;
}

export interface Report {
  providerError: string | null;
  mismatches: Mismatch[];
}

/** The provider's books and ours at the end of a run, and the reconciler's reports. */
export interface Books {
  charges: Charge[];
  payments: OurPayment[];
  providerRefunds: Refund[];
  refunds: OurRefund[];
  unbalancedCurrencies: { currency: string; sum: string }[];
  unbalancedTransactions: { transactionId: string; sum: string }[];
  /** After the drain, with the provider reachable. */
  reportAfterDrain: Report | null;
  /** After a run without the provider, the next run that listed only a narrow window. */
  reportAfterOutage: Report | null;
  /** The provider's events the app acts on, and our records of the events it received or read back. */
  theirEvents: TheirEvent[];
  ourEvents: OurEvent[];
  /** What the admin shows for each payment still pending: its key's state. */
  pendingKeyStates: Map<string, string>;
  actions: OurAction[];
  challenges: ProviderChallenge[];
  /** When our books were read (the database's clock, ms). */
  readAt: number;
  /** The merchants' endpoints, messages and the events owed to them. */
  webhooks: WebhookBooks;
}

/** A provider event of a type the app acts on, and what its object's metadata names. */
export interface TheirEvent {
  id: string;
  type: string;
  objectId: string;
  paymentId: string | null;
  refundId: string | null;
}
/** Our record of a provider event (provider_events). */
export interface OurEvent {
  id: string;
  outcome: string;
  detail: string | null;
}

/** The provider's events of the types the app acts on, from the start of the run. */
export async function readProviderEvents(providerUrl: string, since: Date): Promise<TheirEvent[]> {
  const events: TheirEvent[] = [];
  const listed = httpProvider({ baseUrl: providerUrl }).listEvents({ createdGte: since, types: EVENT_TYPES });
  for await (const e of listed) {
    const object = e.data.object as { id: string; metadata?: Record<string, string> };
    events.push({
      id: e.id,
      type: e.type,
      objectId: object.id,
      paymentId: object.metadata?.payment_id ?? null,
      refundId: object.metadata?.refund_id ?? null,
    });
  }
  return events;
}

export async function readOurEvents(databaseUrl: string): Promise<OurEvent[]> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    return (await client.query<OurEvent>("SELECT id, outcome, detail FROM provider_events")).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function readProviderCharges(providerUrl: string): Promise<Charge[]> {
  const charges: Charge[] = [];
  for await (const c of httpProvider({ baseUrl: providerUrl }).listCharges()) charges.push(c);
  return charges;
}

export async function readProviderRefunds(providerUrl: string): Promise<Refund[]> {
  const refunds: Refund[] = [];
  for await (const r of httpProvider({ baseUrl: providerUrl }).listRefunds()) refunds.push(r);
  return refunds;
}

export async function readOurBooks(databaseUrl: string) {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const payments = await client.query<
      Omit<OurPayment, "createdAt" | "captureBefore"> & { createdAt: Date; captureBefore: Date | null }
    >(`
      SELECT p.id::text, p.order_id::text AS "orderId", p.account_id::text AS "accountId", p.status,
             p.failure_code AS "failureCode", p.provider_charge_id AS "providerChargeId",
             p.created_at AS "createdAt", k.id::text AS "keyId", k.key,
             (SELECT count(*)::int FROM ledger_entries e
               WHERE e.payment_id = p.id AND e.entry_type = 'provider_clearing') AS "clearingEntries",
             p.amount_minor AS "amountMinor", p.payment_method AS "paymentMethod",
             p.capture_method AS "captureMethod", p.captured_minor AS "capturedMinor",
             p.capture_before AS "captureBefore",
             (SELECT coalesce(sum(e.amount_minor), 0)::int FROM ledger_entries e
               WHERE e.payment_id = p.id AND e.entry_type = 'provider_clearing') AS "postedMinor",
             (SELECT count(*)::int FROM ledger_transactions t
               WHERE t.payment_id = p.id AND t.kind = 'authorization_hold') AS holds,
             (SELECT coalesce(sum(e.amount_minor), 0)::int FROM ledger_entries e
               WHERE e.payment_id = p.id AND e.entry_type = 'hold_clearing') AS "heldMinor",
             ARRAY(SELECT t.kind FROM ledger_transactions t
                    WHERE t.payment_id = p.id AND t.kind IN ('hold_captured', 'hold_voided')
                    ORDER BY t.id) AS releases,
             (SELECT coalesce(-sum(e.amount_minor), 0)::int FROM ledger_entries e
               WHERE e.payment_id = p.id AND e.entry_type = 'release_clearing') AS "releasedMinor"
        FROM payments p LEFT JOIN idempotency_keys k ON k.id = p.idempotency_key_id`);
    const actions = await client.query<OurAction>(`
      SELECT id::text, payment_id::text AS "paymentId", kind, status, reason, amount_minor AS "amountMinor"
        FROM authorization_actions`);
    // The simulator keeps its books in a schema of its own in the same database (provider/schema.ts).
    const challenges = await client.query<ProviderChallenge>(`
      SELECT payment_intent AS "paymentIntent", outcome FROM payment_provider.three_d_secure_challenges`);
    const clock = await client.query<{ now: Date }>("SELECT now()");
    const refunds = await client.query<OurRefund>(`
      SELECT r.id::text, r.payment_id::text AS "paymentId", r.amount_minor AS "amountMinor", r.status,
             r.failure_code AS "failureCode", r.provider_refund_id AS "providerRefundId",
             coalesce(p.captured_minor, p.amount_minor) AS captured, p.provider_charge_id AS "providerChargeId",
             (SELECT count(*)::int FROM ledger_transactions t WHERE t.refund_id = r.id) AS reversals
        FROM refunds r JOIN payments p ON p.id = r.payment_id`);
    const currencies = await client.query<{ currency: string; sum: string }>(
      "SELECT currency, sum(amount_minor)::text AS sum FROM ledger_entries GROUP BY currency HAVING sum(amount_minor) <> 0",
    );
    const transactions = await client.query<{ transactionId: string; sum: string }>(
      `SELECT transaction_id::text AS "transactionId", sum(amount_minor)::text AS sum FROM ledger_entries
        GROUP BY transaction_id HAVING sum(amount_minor) <> 0`,
    );
    return {
      payments: payments.rows.map((p) => ({
        ...p,
        createdAt: p.createdAt.getTime(),
        captureBefore: p.captureBefore?.getTime() ?? null,
      })),
      actions: actions.rows,
      challenges: challenges.rows,
      readAt: clock.rows[0]?.now.getTime() ?? Date.now(),
      refunds: refunds.rows.map((r) => ({
        ...r,
        amountMinor: Number(r.amountMinor),
        captured: Number(r.captured),
      })),
      unbalancedCurrencies: currencies.rows,
      unbalancedTransactions: transactions.rows,
    };
  } finally {
    await client.end();
  }
}

/**
 * How many payments, refunds and captures or cancels are still pending, and authorizations past
 * their deadline the expiry has not canceled yet (the drain waits for none).
 */
export async function countPending(databaseUrl: string): Promise<number> {
  const client = new pg.Client(databaseUrl);
  try {
    await client.connect();
    const { rows } = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM payments WHERE status = 'pending')
            + (SELECT count(*) FROM refunds WHERE status = 'pending')
            + (SELECT count(*) FROM authorization_actions WHERE status = 'pending')
            + (SELECT count(*) FROM payments WHERE status = 'authorized' AND capture_before <= now()) AS n`,
    );
    return Number(rows[0]?.n ?? 0);
  } catch {
    return -1;
  } finally {
    await client.end().catch(() => {});
  }
}
