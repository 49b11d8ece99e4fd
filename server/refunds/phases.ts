import { LeaseLostError } from "@idempotent-checkout/idempotency";
import { sql } from "@idempotent-checkout/idempotency/sql";
import { type Db, newId, rawQuery, type Tx } from "../db";
import { domainErrors } from "../errors";
import { failpoint } from "../failpoints";
import type { KeyOwner } from "../keys";
import { postRefundReversal } from "../ledger";
import { resumeRow } from "../operation/resume";
import { recordRefundEvent } from "../outbox";
import type { RefundProvider } from "../provider";
import { findEarlierRefund, refundAtProvider } from "./provider-phase";
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

/** The recovery points of a refund, as a payment's (decision 0016). */
export const REFUND_RECOVERY = { started: "started", refundCreated: "refund_created" } as const;

export interface RefundRequest {
  paymentId: string;
  amountMinor: number;
  reason: string;
}
export interface RefundDeps {
  prisma: Db;
  provider: RefundProvider;
}

/**
 * Runs (or resumes, after a takeover) one refund: phase 1 inserts the pending refund (its request
 * marked as leaving), phase 2 refunds at the provider with a key derived from ours, phase 3
 * settles the refund, books its reversal, writes refund.succeeded and completes the key in one
 * transaction. The same code serves the operator's request, its retries and the completer.
 */
export async function executeRefund(
  deps: RefundDeps,
  owner: KeyOwner,
  request: RefundRequest,
  opts: {
    /** Who asked (recorded on a refund this attempt creates). */
    createdBy?: string;
    providerFault?: string;
    /** The completer: a refund older than this whose request never left is ended, nothing refunded. */
    abandonAfterSeconds?: number;
  } = {},
): Promise<TRefund> {
  const resumed = owner.recoveryPoint !== REFUND_RECOVERY.started;
  const found = resumed ? await resumeRefund(deps.prisma, owner.keyId, opts.abandonAfterSeconds) : null;
  const refund =
    found?.refund ??
    (await owner
      .atomicPhase(REFUND_RECOVERY.refundCreated, (tx) =>
        createPendingRefund(tx, owner, request, opts.createdBy ?? "operator"),
      )
      .catch(async (error: unknown) => {
        throw (await refusalOf(deps.prisma, request, error)) ?? error;
      }));
  failpoint("after_refund_created");

  // Proven by our own durable mark: no request for it ever left, so nothing can have been refunded.
  if (found?.abandonable) {
    return owner.fail(domainErrors.refundAbandoned(refund), (tx) =>
      settleRefund(tx, refund, {
        status: "failed",
        failureCode: "abandoned",
        failureMessage: "Abandoned before any request reached the provider.",
        onlyIfNeverRequested: true,
      }),
    );
  }
  // A resumed attempt may follow one whose refund went through: ask before refunding again.
  const earlier = resumed ? await findEarlierRefund(deps.provider, refund) : null;
  const outcome = earlier ?? (await refundAtProvider(deps, refund, resumed, opts.providerFault));
  failpoint("after_provider_refund");
  if ("refused" in outcome) {
    const error =
      outcome.restMinor !== null
        ? // The provider's figures: its rest may be smaller than our books say (a refund made there).
          domainErrors.refundExceedsRefundable({
            paymentId: refund.paymentId,
            amountMinor: refund.amountMinor,
            refundableMinor: outcome.restMinor,
            pendingMinor: 0,
            currency: refund.currency,
          })
        : domainErrors.paymentNotRefundable({
            id: refund.paymentId,
            status: "not refundable at the provider",
          });
    return owner.fail(error, (tx) =>
      settleRefund(tx, refund, {
        status: "failed",
        failureCode: outcome.code,
        failureMessage: outcome.refused,
      }),
    );
  }
  return owner.complete(async (tx) => {
    const settled = await settleRefund(tx, refund, { status: "succeeded", providerRefundId: outcome.id });
    await postRefundReversal(tx, {
      refundId: refund.id,
      paymentId: refund.paymentId,
      amountMinor: refund.amountMinor,
      currency: refund.currency,
      description: `Refund ${refund.id} of payment ${refund.paymentId}`,
    });
    await recordRefundEvent(tx, {
      refundId: refund.id,
      paymentId: refund.paymentId,
      orderId: refund.orderId,
      accountId: refund.accountId,
      amount: refund.amountMinor,
      currency: refund.currency,
      reason: refund.reason,
      providerRefundId: outcome.id,
      occurredAt: settled.updatedAt.toISOString(),
    });
    return refundView({ ...refund, status: "succeeded", providerRefundId: outcome.id });
  });
}

/**
 * Phase 1: the payment's row is locked (its refunds are decided one after another, never on a
 * shared account row), what is left to refund is read after the lock, and the pending refund is
 * inserted with its request marked as leaving (decision 0050: the request follows this commit).
 * The database's trigger checks the same again, whatever called it.
 */
async function createPendingRefund(
  tx: Tx,
  owner: KeyOwner,
  request: RefundRequest,
  createdBy: string,
): Promise<TrackedRefund> {
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
    WITH p AS (SELECT id, status, amount_minor, currency FROM payments WHERE id = ${request.paymentId}::uuid FOR UPDATE)
    SELECT p.*, (SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE payment_id = p.id AND status = 'succeeded')::bigint AS refunded,
                (SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE payment_id = p.id AND status = 'pending')::bigint AS pending
      FROM p`;
  if (!payment) throw domainErrors.notFound("Payment");
  if (payment.status !== "succeeded") throw domainErrors.paymentNotRefundable(payment);
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
  const [row] = await rawQuery<RefundRow>(
    tx,
    sql`WITH r AS (
          INSERT INTO refunds (id, payment_id, account_id, idempotency_key_id, amount_minor, currency, reason, provider_key, refund_requested_at, created_by)
          SELECT ${newId()}::uuid, p.id, p.account_id, ${owner.keyId}::bigint, ${request.amountMinor}::int, p.currency,
                 ${request.reason}, ${owner.derivedKey("refund")}, now(), ${createdBy.slice(0, 200)}
            FROM payments p WHERE p.id = ${request.paymentId}::uuid
          RETURNING *)
        SELECT ${REFUND_COLUMNS} FROM r JOIN payments p ON p.id = r.payment_id`,
  );
  if (!row) throw new Error(`refund for key ${owner.keyId} was not inserted`);
  return trackedFromRow(row);
}

/** The refund an earlier attempt created, and whether it may be abandoned now (no request ever left). */
async function resumeRefund(prisma: Db, keyId: bigint, abandonAfterSeconds: number | undefined) {
  const { row, abandonable } = await resumeRow<RefundRow>(
    prisma,
    {
      columns: REFUND_COLUMNS,
      from: sql`refunds r JOIN payments p ON p.id = r.payment_id`,
      alias: "r",
      mark: REFUND_REQUESTED,
    },
    keyId,
    abandonAfterSeconds,
  );
  return { refund: trackedFromRow(row), abandonable };
}

/**
 * The refund's end, fenced by its status: when it is no longer pending, another attempt settled
 * it after taking our key over, so this one rolls back and answers 409.
 */
async function settleRefund(
  tx: Tx,
  refund: TrackedRefund,
  end: {
    status: "succeeded" | "failed";
    providerRefundId?: string;
    failureCode?: string;
    failureMessage?: string;
    onlyIfNeverRequested?: boolean;
  },
): Promise<{ updatedAt: Date }> {
  const [row] = await tx.$queryRaw<{ updated_at: Date }[]>`
    UPDATE refunds
       SET status = ${end.status}, provider_refund_id = ${end.providerRefundId ?? null},
           failure_code = ${end.failureCode ?? null}, failure_message = ${end.failureMessage ?? null}, updated_at = now()
     WHERE id = ${refund.id}::uuid AND status = 'pending'
       AND (${end.onlyIfNeverRequested ?? false} = false OR refund_requested_at IS NULL)
    RETURNING updated_at`;
  if (!row) throw new LeaseLostError();
  return { updatedAt: row.updated_at };
}
