import type { TRPCError } from "@trpc/server";
import { createContextInner } from "../context";
import { db } from "../db";
import { env } from "../env";
import type { PaymentProvider } from "../provider";
import { createCaller } from "../root";
import type { TestAccount } from "./fixtures";
import { callOutcome, createTestOrder, newKey, pay } from "./payments";

export interface RefundInput {
  paymentId: string;
  amountMinor: number;
  reason: string;
}

/** An order of the account paid with a visa card: its payment's id and amount. */
export async function paidPayment(
  account: TestAccount,
  provider: PaymentProvider,
  items = [{ sku: "TEE-CLASSIC", quantity: 2 }],
) {
  const order = await createTestOrder(account, items);
  const paid = await pay(account, newKey(), { orderId: order.id, paymentMethod: "pm_card_visa" }, provider);
  if (!paid.ok) throw paid.error;
  return { orderId: order.id, paymentId: paid.data.id, amount: paid.data.amount };
}

/** An order of the account whose card was declined: its payment, not refundable. */
export async function declinedPayment(account: TestAccount, provider: PaymentProvider) {
  const order = await createTestOrder(account);
  const paid = await pay(
    account,
    newKey(),
    { orderId: order.id, paymentMethod: "pm_card_declined" },
    provider,
  );
  if (paid.ok) throw new Error("pm_card_declined was not declined");
  return db().payment.findFirstOrThrow({ where: { orderId: order.id } });
}

/** An operator's context (as the admin), with the request headers given. */
export function operatorContext(headers: Record<string, string>, provider?: PaymentProvider) {
  return createContextInner({
    provider,
    principal: { account: null, isAdmin: true, admin: { actor: "test operator" } },
    reqHeaders: new Headers(headers),
    resHeaders: new Headers(),
  });
}

export type RefundOutcome =
  | {
      ok: true;
      data: Awaited<ReturnType<ReturnType<typeof createCaller>["admin"]["refunds"]["create"]>>;
      headers: Headers;
    }
  | { ok: false; error: TRPCError; headers: Headers };

/** admin.refunds.create through tRPC's caller, as the admin console calls it. */
export async function refund(
  key: string,
  input: RefundInput,
  provider: PaymentProvider,
  headers: Record<string, string> = {},
): Promise<RefundOutcome> {
  const ctx = operatorContext({ "idempotency-key": key, ...headers }, provider);
  return callOutcome(ctx.resHeaders, () => createCaller(ctx).admin.refunds.create(input));
}

/** A client that retries with the same key while told to (5xx, or an answer with Retry-After). */
export async function refundUntilSettled(
  key: string,
  input: RefundInput,
  provider: PaymentProvider,
  maxAttempts = 60,
): Promise<RefundOutcome & { attempts: number; seen: string[] }> {
  // Every error code answered on the way, so a test can tell a 5xx retried away from none.
  const seen: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const outcome = await refund(key, input, provider);
    if (!outcome.ok) seen.push(outcome.error.code);
    const retryable =
      !outcome.ok &&
      (outcome.error.code === "SERVICE_UNAVAILABLE" ||
        outcome.error.code === "INTERNAL_SERVER_ERROR" ||
        outcome.headers.has("retry-after"));
    if (!retryable || attempt >= maxAttempts) return { ...outcome, attempts: attempt, seen };
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
  }
}

/** POST /api/v1/refunds with the operators' Bearer token. */
export async function postRefund(
  baseUrl: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${baseUrl}/api/v1/refunds`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${env.ADMIN_TOKEN}`,
      ...(key === undefined ? {} : { "idempotency-key": key }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** What the books and the provider hold for a payment's refunds. */
export async function refundBooks(paymentId: string) {
  const [row] = await db().$queryRaw<
    {
      succeeded: number;
      pending: number;
      failed: number;
      refunded: number;
      reversals: number;
      reversal_sum: number;
      unbalanced: number;
    }[]
  >`
    SELECT count(*) FILTER (WHERE r.status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE r.status = 'pending')::int AS pending,
           count(*) FILTER (WHERE r.status = 'failed')::int AS failed,
           coalesce(sum(r.amount_minor) FILTER (WHERE r.status = 'succeeded'), 0)::int AS refunded,
           (SELECT count(*) FROM ledger_transactions t WHERE t.payment_id = ${paymentId}::uuid AND t.refund_id IS NOT NULL)::int AS reversals,
           (SELECT coalesce(sum(e.amount_minor), 0) FROM ledger_entries e
             WHERE e.payment_id = ${paymentId}::uuid AND e.refund_id IS NOT NULL AND e.entry_type = 'refund_revenue')::int AS reversal_sum,
           (SELECT count(*) FROM (SELECT e.transaction_id FROM ledger_entries e WHERE e.payment_id = ${paymentId}::uuid
                                   GROUP BY e.transaction_id HAVING sum(e.amount_minor) <> 0) u)::int AS unbalanced
      FROM refunds r WHERE r.payment_id = ${paymentId}::uuid`;
  return row;
}

/** The provider's refunds of a charge, and their sum. */
export async function providerRefunds(provider: PaymentProvider, charge: string) {
  const found = [];
  for await (const r of provider.listRefunds({ charge })) found.push(r);
  return { count: found.length, sum: found.reduce((n, r) => n + r.amount, 0), refunds: found };
}
