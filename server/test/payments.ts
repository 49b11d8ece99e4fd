import { randomUUID } from "node:crypto";
import type { TRPCError } from "@trpc/server";
import { startProvider } from "../../scripts/lib/provider-process";
import { db } from "../db";
import { httpProvider, type PaymentProvider } from "../provider";
import { createCaller } from "../root";
import { contextFor, type TestAccount } from "./fixtures";

export async function startTestProvider(env: Record<string, string> = {}) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("DATABASE_URL is required");
  const process_ = await startProvider({ databaseUrl, env });
  return { ...process_, client: httpProvider({ baseUrl: process_.url, timeoutMs: 5000 }) };
}

export async function createTestOrder(account: TestAccount, items = [{ sku: "TEE-CLASSIC", quantity: 2 }]) {
  return createCaller(contextFor(account)).orders.create({ items });
}

export type PayOutcome =
  | {
      ok: true;
      data: Awaited<ReturnType<ReturnType<typeof createCaller>["payments"]["create"]>>;
      headers: Headers;
    }
  | { ok: false; error: TRPCError; headers: Headers };

export async function pay(
  account: TestAccount,
  key: string,
  input: { orderId: string; paymentMethod: string },
  provider: PaymentProvider,
): Promise<PayOutcome> {
  const ctx = contextFor(account, { "idempotency-key": key }, provider);
  return callOutcome(ctx.resHeaders, () => createCaller(ctx).payments.create(input));
}

/**
 * A caller's call as a client sees it: its data, or the tRPC error it answered with. The error is
 * told by tRPC's own `name`, never by class identity (decision 0095); anything else is rethrown.
 */
export async function callOutcome<T>(
  headers: Headers,
  call: () => Promise<T>,
): Promise<{ ok: true; data: T; headers: Headers } | { ok: false; error: TRPCError; headers: Headers }> {
  try {
    return { ok: true, data: await call(), headers };
  } catch (error) {
    if (isTRPCError(error)) return { ok: false, error, headers };
    throw error;
  }
}

function isTRPCError(error: unknown): error is TRPCError {
  return (
    error instanceof Error &&
    error.name === "TRPCError" &&
    typeof (error as { code?: unknown }).code === "string"
  );
}

/** A client that retries with the same key on 5xx and in-flight 409s, as the browser does. */
export async function payUntilSettled(
  account: TestAccount,
  key: string,
  input: { orderId: string; paymentMethod: string },
  provider: PaymentProvider,
  maxAttempts = 40,
): Promise<PayOutcome & { attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await pay(account, key, input, provider);
    const retryable =
      !outcome.ok &&
      (outcome.error.code === "SERVICE_UNAVAILABLE" ||
        outcome.error.code === "INTERNAL_SERVER_ERROR" ||
        (outcome.error.code === "CONFLICT" && outcome.headers.has("retry-after")));
    if (!retryable || attempt >= maxAttempts) return { ...outcome, attempts: attempt };
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
  }
}

export async function providerChargesForOrder(provider: PaymentProvider, orderId: string, since: Date) {
  const found = [];
  for await (const c of provider.listCharges({ createdGte: since }))
    if (c.metadata.order_id === orderId) found.push(c);
  return found;
}

/** The order's ledger: its transactions and whether each sums to zero. */
export async function ledgerForOrder(orderId: string) {
  return db().$queryRaw<{ transaction_id: string; entries: number; sum: number }[]>`
    SELECT t.id::text AS transaction_id, count(e.id)::int AS entries, coalesce(sum(e.amount_minor), 0)::int AS sum
      FROM ledger_transactions t JOIN payments p ON p.id = t.payment_id
      LEFT JOIN ledger_entries e ON e.transaction_id = t.id
     WHERE p.order_id = ${orderId}::uuid GROUP BY t.id`;
}

export const newKey = () => randomUUID();

export interface SettledOrder {
  orderId: string;
  paymentId: string;
  outcome: "succeeded" | "declined";
}

/**
 * `count` payments, `concurrency` clients at a time, each retrying its own key until the
 * payment settles; one in four uses a declined card. Throws if any does not settle.
 */
export async function payMany(
  account: TestAccount,
  provider: PaymentProvider,
  opts: { count: number; concurrency: number },
): Promise<SettledOrder[]> {
  const methods = ["pm_card_visa", "pm_card_visa", "pm_card_visa", "pm_card_declined"];
  const settled: SettledOrder[] = [];
  for (let start = 0; start < opts.count; start += opts.concurrency) {
    const batch = Array.from({ length: Math.min(opts.concurrency, opts.count - start) }, (_, i) => start + i);
    await Promise.all(
      batch.map(async (n) => {
        const order = await createTestOrder(account, [{ sku: "SOCKS-WOOL", quantity: 1 + (n % 3) }]);
        const method = methods[n % methods.length] as string;
        const paid = await payUntilSettled(
          account,
          newKey(),
          { orderId: order.id, paymentMethod: method },
          provider,
        );
        if (!paid.ok && paid.error.code !== "PAYMENT_REQUIRED") {
          throw new Error(`payment did not settle: ${paid.error.code} ${paid.error.message}`);
        }
        const payment = await db().payment.findFirstOrThrow({
          where: { orderId: order.id },
          select: { id: true },
        });
        settled.push({
          orderId: order.id,
          paymentId: payment.id,
          outcome: paid.ok ? "succeeded" : "declined",
        });
      }),
    );
  }
  return settled;
}
