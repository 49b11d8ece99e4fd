import { LeaseLostError } from "@idempotent-checkout/idempotency";
import { sql } from "@idempotent-checkout/idempotency/sql";
import { type Db, newId, rawQuery, type Tx } from "../db";
import { domainErrors, invalidAmount } from "../errors";
import type { KeyOwner } from "../keys";
import { postRefundReversal } from "../ledger";
import { askProvider, keyedOperation, writeAlongside } from "../operation";
import { recordRefundEvent } from "../outbox";
import type { CreateRefundInput, Refund, RefundProvider } from "../provider";
import { refusalOf } from "./refusals";
import {
  REFUND_COLUMNS,
  REFUND_REQUESTED,
  type RefundRow,
  type TrackedRefund,
  trackedFromRow,
} from "./tracked";
import { refundView, type TRefund } from "./views";

/** The refund procedure's identity in the key store; the completer finds its keys by it. */
export const REFUND_PROCEDURE = "refunds.create";

export interface RefundRequest {
  paymentId: string;
  amountMinor: number;
  reason: string;
  /** Who asked (recorded on the refund this request creates); the completer's own is "completer". */
  createdBy?: string;
}
export interface RefundDeps {
  prisma: Db;
  provider: RefundProvider;
}

/** Provider answers that prove no refund was made for this request, whatever earlier attempts did. */
const DEFINITE_REFUSALS = new Set([
  "amount_too_large",
  "charge_already_refunded",
  "charge_not_refundable",
  "amount_not_in_steps",
  "resource_missing",
]);

/**
 * A refund: phase 1 inserts the pending refund (its request marked as leaving), phase 2 refunds at
 * the provider with a key derived from ours, phase 3 settles the refund, books its reversal, writes
 * refund.succeeded and completes the key in one transaction. A refund whose request may have left
 * is never ended as "nothing refunded".
 */
export const refund = keyedOperation<
  RefundDeps,
  RefundRequest,
  TrackedRefund,
  Refund,
  TRefund,
  CreateRefundInput
>({
  procedure: REFUND_PROCEDURE,
  failpoints: { created: "after_refund_created", provider: "after_provider_refund" },
  createdPoint: "refund_created",
  rows: {
    columns: REFUND_COLUMNS,
    from: sql`refunds r JOIN payments p ON p.id = r.payment_id`,
    alias: "r",
    mark: REFUND_REQUESTED,
    fromRow: trackedFromRow,
  },
  create: createPendingRefund,
  createRefused: refusalOf,
  requestOf: (key) => ({ ...(key.requestParams as RefundRequest), createdBy: "completer" }),
  provider: {
    definiteRefusal: ({ code }) => DEFINITE_REFUSALS.has(code),
    inFlight: domainErrors.inFlightAtProvider,
    // Narrowed to the payment's refunds: Stripe cannot search refunds, so a filter alone walks them all.
    list: (deps, filter, row) => deps.provider.listRefunds({ ...filter, charge: row.providerChargeId }),
    rowIdKey: "refund_id",
    request: (row) => ({
      charge: row.providerChargeId,
      amount: row.amountMinor,
      metadata: { refund_id: row.id, payment_id: row.paymentId },
    }),
    send: (deps, request, key, opts) => deps.provider.createRefund(request, key, opts),
    check: checkedRefund,
  },
  abandoned: (row) => domainErrors.refundAbandoned(row),
  refused: refusalAnswer,
  finish: (_deps, owner, row, made, alongside) =>
    owner.complete(async (tx) => {
      await writeAlongside(tx, alongside);
      const settled = await settleSucceeded(tx, row, made.id);
      await postRefundReversal(tx, {
        refundId: row.id,
        paymentId: row.paymentId,
        amountMinor: row.amountMinor,
        currency: row.currency,
        description: `Refund ${row.id} of payment ${row.paymentId}`,
      });
      await recordRefundEvent(tx, {
        refundId: row.id,
        paymentId: row.paymentId,
        orderId: row.orderId,
        accountId: row.accountId,
        amount: row.amountMinor,
        currency: row.currency,
        reason: row.reason,
        providerRefundId: made.id,
        occurredAt: settled.updatedAt.toISOString(),
      });
      return refundView({ ...row, status: "succeeded", providerRefundId: made.id });
    }),
});

/**
 * Phase 1: the payment's row is locked (its refunds are decided one after another, never on a
 * shared account row), what is left to refund is read after the lock, and the pending refund is
 * inserted with its request marked as leaving (decision 0050: the request follows this commit).
 * The database's trigger checks the same again, whatever called it.
 */
async function createPendingRefund(tx: Tx, owner: KeyOwner, request: RefundRequest): Promise<TrackedRefund> {
  // The lock first, in a statement of its own: a statement's snapshot is taken before it waits
  // for a lock, so sums read in the locking statement would miss refunds committed meanwhile
  // (the trigger then refused the insert and the answer was a 500, not the 422 below).
  await tx.$queryRaw`SELECT 1 FROM payments WHERE id = ${request.paymentId}::uuid FOR UPDATE`;
  const [payment] = await tx.$queryRaw<
    {
      id: string;
      status: string;
      amount_minor: number;
      currency: string;
      refunded: bigint;
      pending: bigint;
    }[]
  >`
    WITH p AS (SELECT id, status, coalesce(captured_minor, amount_minor) AS amount_minor, currency
                 FROM payments WHERE id = ${request.paymentId}::uuid FOR UPDATE)
    SELECT p.*, (SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE payment_id = p.id AND status = 'succeeded')::bigint AS refunded,
                (SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE payment_id = p.id AND status = 'pending')::bigint AS pending
      FROM p`;
  if (!payment) throw domainErrors.notFound("Payment");
  if (payment.status !== "succeeded") throw domainErrors.paymentNotRefundable(payment);
  // Valid in the payment's currency as Stripe defines it (a JOD refund ends in 0): final, so stored.
  const invalid = invalidAmount(request.amountMinor, payment.currency, "refund");
  if (invalid) throw invalid;
  const refunded = Number(payment.refunded);
  const pending = Number(payment.pending);
  const refundable = payment.amount_minor - refunded - pending;
  if (request.amountMinor > refundable) {
    // It would fit should a pending refund fail: an answer that may change, so not stored.
    const mayFitLater = request.amountMinor <= payment.amount_minor - refunded;
    throw domainErrors.refundExceedsRefundable(
      {
        paymentId: payment.id,
        amountMinor: request.amountMinor,
        refundableMinor: refundable,
        pendingMinor: pending,
        currency: payment.currency,
      },
      mayFitLater ? 1 : undefined,
    );
  }
  const createdBy = (request.createdBy ?? "operator").slice(0, 200);
  const [row] = await rawQuery<RefundRow>(
    tx,
    sql`WITH r AS (
          INSERT INTO refunds (id, payment_id, account_id, idempotency_key_id, amount_minor, currency, reason, provider_key, refund_requested_at, created_by)
          SELECT ${newId()}::uuid, p.id, p.account_id, ${owner.keyId}::bigint, ${request.amountMinor}::int, p.currency,
                 ${request.reason}, ${owner.derivedKey("refund")}, now(), ${createdBy}
            FROM payments p WHERE p.id = ${request.paymentId}::uuid
          RETURNING *)
        SELECT ${REFUND_COLUMNS} FROM r JOIN payments p ON p.id = r.payment_id`,
  );
  if (!row) throw new Error(`refund for key ${owner.keyId} was not inserted`);
  return trackedFromRow(row);
}

function checkedRefund(found: Refund, row: TrackedRefund): Refund {
  if (
    found.amount !== row.amountMinor ||
    found.charge !== row.providerChargeId ||
    found.currency.toUpperCase() !== row.currency
  ) {
    throw new Error(`provider refund ${found.id} does not match refund ${row.id}`);
  }
  return found;
}

/**
 * A definite refusal's answer. Over the rest, its figures are the provider's own (the charge less
 * its refunds), which may be smaller than our books say; read now, or a retryable error.
 */
async function refusalAnswer(deps: RefundDeps, row: TrackedRefund, refusal: { code: string }) {
  if (refusal.code !== "amount_too_large" && refusal.code !== "charge_already_refunded") {
    return domainErrors.paymentNotRefundable({ id: row.paymentId, status: "not refundable at the provider" });
  }
  const restMinor = await askProvider(async () => {
    const charge = await deps.provider.getCharge(row.providerChargeId);
    let refunded = 0;
    for await (const made of deps.provider.listRefunds({ charge: row.providerChargeId }))
      refunded += made.amount;
    return Math.max(0, (charge?.amountReceived ?? 0) - refunded);
  }, domainErrors.inFlightAtProvider);
  return domainErrors.refundExceedsRefundable({
    paymentId: row.paymentId,
    amountMinor: row.amountMinor,
    refundableMinor: restMinor,
    pendingMinor: 0,
    currency: row.currency,
  });
}

/** The refund's success, fenced by its status like every other end. */
async function settleSucceeded(tx: Tx, row: TrackedRefund, providerRefundId: string) {
  const [settled] = await tx.$queryRaw<{ updated_at: Date }[]>`
    UPDATE refunds SET status = 'succeeded', provider_refund_id = ${providerRefundId}, updated_at = now()
     WHERE id = ${row.id}::uuid AND status = 'pending'
    RETURNING updated_at`;
  if (!settled) throw new LeaseLostError();
  return { updatedAt: settled.updated_at };
}
