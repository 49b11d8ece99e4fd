import { type Db, newId, type Tx } from "../db";
import { domainErrors } from "../errors";
import { failpoint } from "../failpoints";
import { type KeyOwner, LeaseLostError } from "../keys";
import { postRefundReversal } from "../ledger";
import { recordRefundEvent } from "../outbox";
import { isProviderError, type ProviderError, type ProviderRefund, type RefundProvider } from "./provider";
import { type RefundRecord, refundView, type TRefund } from "./views";

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

/** A pending refund with what its phases need of its payment. */
interface TrackedRefund extends RefundRecord {
  accountId: string;
  orderId: string;
  providerKey: string;
  providerChargeId: string;
  /** When a refund request may last have left (the database's clock); null: none ever did. */
  refundRequestedAt: string | null;
}
interface RefundRow {
  id: string;
  payment_id: string;
  account_id: string;
  order_id: string;
  amount_minor: number;
  currency: string;
  reason: string;
  status: string;
  provider_refund_id: string | null;
  provider_key: string;
  provider_charge_id: string;
  refund_requested_at: Date | null;
  created_at: Date;
}
const trackedFromRow = (r: RefundRow): TrackedRefund => ({
  id: r.id,
  paymentId: r.payment_id,
  accountId: r.account_id,
  orderId: r.order_id,
  amountMinor: r.amount_minor,
  currency: r.currency,
  reason: r.reason,
  status: r.status,
  providerRefundId: r.provider_refund_id,
  providerKey: r.provider_key,
  providerChargeId: r.provider_charge_id,
  refundRequestedAt: r.refund_requested_at ? new Date(r.refund_requested_at).toISOString() : null,
  createdAt: new Date(r.created_at),
});

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
      outcome.code === "amount_too_large"
        ? domainErrors.refundExceedsRefundable((await refundableFacts(deps.prisma, refund)).facts)
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

const REFUND_SELECT = `r.id, r.payment_id, r.account_id, p.order_id, r.amount_minor, r.currency, r.reason, r.status,
  r.provider_refund_id, r.provider_key, p.provider_charge_id, r.refund_requested_at, r.created_at`;

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
  const [row] = await tx.$queryRawUnsafe<RefundRow[]>(
    `WITH r AS (
       INSERT INTO refunds (id, payment_id, account_id, idempotency_key_id, amount_minor, currency, reason, provider_key, refund_requested_at, created_by)
       SELECT $1::uuid, p.id, p.account_id, $2::bigint, $3::int, p.currency, $4, $5, now(), $6
         FROM payments p WHERE p.id = $7::uuid
       RETURNING *)
     SELECT ${REFUND_SELECT} FROM r JOIN payments p ON p.id = r.payment_id`,
    newId(),
    owner.keyId,
    request.amountMinor,
    request.reason,
    owner.derivedKey("refund"),
    createdBy.slice(0, 200),
    request.paymentId,
  );
  if (!row) throw new Error(`refund for key ${owner.keyId} was not inserted`);
  return trackedFromRow(row);
}

/** What is left to refund on the refund's payment, beside this refund (for a refusal's answer). */
async function refundableFacts(
  prisma: Db,
  refund: Pick<TrackedRefund, "paymentId" | "amountMinor"> & { id?: string },
) {
  const [row] = await prisma.$queryRaw<
    { amount_minor: number; currency: string; refunded: bigint; pending: bigint }[]
  >`
    SELECT p.amount_minor, p.currency,
           (SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE payment_id = p.id AND status = 'succeeded')::bigint AS refunded,
           (SELECT coalesce(sum(amount_minor), 0) FROM refunds
             WHERE payment_id = p.id AND status = 'pending' AND id IS DISTINCT FROM ${refund.id ?? null}::uuid)::bigint AS pending
      FROM payments p WHERE p.id = ${refund.paymentId}::uuid`;
  const captured = row?.amount_minor ?? 0;
  const refunded = Number(row?.refunded ?? 0);
  const pending = Number(row?.pending ?? 0);
  return {
    facts: {
      paymentId: refund.paymentId,
      amountMinor: refund.amountMinor,
      refundableMinor: Math.max(0, captured - refunded - pending),
      pendingMinor: pending,
      currency: row?.currency ?? "",
    },
    // It would fit should a pending refund fail: an answer that may change, so not stored.
    mayFitLater: refund.amountMinor <= captured - refunded,
  };
}

/**
 * The database's own refusal of phase 1 (the refunds trigger, known by SQLSTATE 23514 and its name
 * in CONSTRAINT or DETAIL, on the error or anything it wraps) as the answer phase 1 would have
 * given: the trigger is the guarantee, and its refusal is never a 500.
 */
async function refusalOf(prisma: Db, request: RefundRequest, error: unknown) {
  const refusal = databaseRefusal(error);
  if (refusal === "refunds_within_captured") {
    const { facts, mayFitLater } = await refundableFacts(prisma, request);
    return domainErrors.refundExceedsRefundable(facts, mayFitLater ? 1 : undefined);
  }
  if (refusal === "refunds_payment_succeeded") {
    const payment = await prisma.payment.findUnique({
      where: { id: request.paymentId },
      select: { status: true },
    });
    return domainErrors.paymentNotRefundable({ id: request.paymentId, status: payment?.status ?? "unknown" });
  }
  return undefined;
}

/** The refunds trigger's refusals that have an answer of their own (decision 0112). */
const REFUSALS = ["refunds_within_captured", "refunds_payment_succeeded"] as const;

export function databaseRefusal(error: unknown): (typeof REFUSALS)[number] | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== "object" || e === null || seen.has(e)) continue;
    seen.add(e);
    const o = e as Record<string, unknown>;
    if ((o.code ?? o.originalCode) === "23514")
      for (const name of [o.constraint, o.detail])
        if (REFUSALS.includes(name as (typeof REFUSALS)[number])) return name as (typeof REFUSALS)[number];
    queue.push(o.cause, o.meta, o.driverAdapterError);
  }
  return undefined;
}

/** The refund an earlier attempt created, and whether it may be abandoned now (no request ever left). */
async function resumeRefund(prisma: Db, keyId: bigint, abandonAfterSeconds: number | undefined) {
  const [row] = await prisma.$queryRawUnsafe<(RefundRow & { abandonable: boolean })[]>(
    `SELECT ${REFUND_SELECT},
            ($2::int IS NOT NULL AND r.status = 'pending' AND r.refund_requested_at IS NULL
              AND r.created_at <= now() - make_interval(secs => coalesce($2::int, 0))) AS abandonable
       FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.idempotency_key_id = $1::bigint`,
    keyId,
    abandonAfterSeconds ?? null,
  );
  if (!row) throw new Error(`no refund for idempotency key ${keyId}`);
  return { refund: trackedFromRow(row), abandonable: row.abandonable };
}

/** The provider's refund made with our derived key or, should it have forgotten keys, our refund id. */
async function findEarlierRefund(
  provider: RefundProvider,
  refund: TrackedRefund,
): Promise<ProviderRefund | null> {
  try {
    for (const filter of [{ idempotencyKey: refund.providerKey }, { metadata: { refund_id: refund.id } }]) {
      for await (const found of provider.listRefunds(filter)) {
        if (found.metadata.refund_id === refund.id) return checkedRefund(found, refund);
      }
    }
    return null;
  } catch (error) {
    if (isProviderError(error)) throw providerError(error);
    throw error;
  }
}

function checkedRefund(found: ProviderRefund, refund: TrackedRefund): ProviderRefund {
  if (
    found.amount !== refund.amountMinor ||
    found.charge !== refund.providerChargeId ||
    found.currency.toUpperCase() !== refund.currency
  ) {
    throw new Error(`provider refund ${found.id} does not match refund ${refund.id}`);
  }
  return found;
}

/** Provider answers that prove no refund was made for this request, whatever earlier attempts did. */
const DEFINITE_REFUSALS = new Set(["amount_too_large", "charge_not_refundable", "resource_missing"]);

function providerError(error: ProviderError) {
  const retryAfterSeconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
  return error.kind === "conflict"
    ? domainErrors.inFlightAtProvider(retryAfterSeconds)
    : domainErrors.providerUnavailable(error.kind, retryAfterSeconds);
}

/**
 * Phase 2: the refund at the provider, or why it refused for good. A durable mark that a request
 * may be out commits before every request (for a fresh refund, with its creation); when the
 * request provably never left (connection refused), the mark is taken back.
 */
async function refundAtProvider(
  deps: RefundDeps,
  refund: TrackedRefund,
  resumed: boolean,
  fault: string | undefined,
): Promise<ProviderRefund | { refused: string; code: string }> {
  const mark = resumed
    ? await markRefundRequest(deps.prisma, refund)
    : { previous: null, mine: refund.refundRequestedAt };
  try {
    const made = await deps.provider.createRefund(
      {
        charge: refund.providerChargeId,
        amount: refund.amountMinor,
        metadata: { refund_id: refund.id, payment_id: refund.paymentId },
      },
      refund.providerKey,
      fault ? { fault } : undefined,
    );
    return checkedRefund(made, refund);
  } catch (error) {
    if (!isProviderError(error)) throw error;
    if (error.kind === "rejected" && error.code && DEFINITE_REFUSALS.has(error.code))
      return { refused: error.message, code: error.code };
    if (!error.requestMayHaveLeft) await unmarkRefundRequest(deps.prisma, refund.id, mark);
    throw providerError(error);
  }
}

interface RequestMark {
  previous: string | null;
  mine: string | null;
}

/** Commits "a refund request may be out since now" (the database's now) before a re-send. */
async function markRefundRequest(prisma: Db, refund: TrackedRefund): Promise<RequestMark> {
  const [row] = await prisma.$queryRaw<{ mine: Date }[]>`
    UPDATE refunds SET refund_requested_at = now()
     WHERE id = ${refund.id}::uuid AND status = 'pending'
    RETURNING refund_requested_at AS mine`;
  // Settled meanwhile by another attempt that took our key over: this one's writes are fenced.
  if (!row) throw new LeaseLostError();
  return { previous: refund.refundRequestedAt, mine: row.mine.toISOString() };
}

/** The request never left: the mark goes back to what it was, unless another attempt marked since. */
async function unmarkRefundRequest(prisma: Db, refundId: string, mark: RequestMark) {
  if (mark.mine === null) return;
  await prisma.$executeRaw`
    UPDATE refunds SET refund_requested_at = ${mark.previous}::timestamptz
     WHERE id = ${refundId}::uuid AND status = 'pending' AND refund_requested_at = ${mark.mine}::timestamptz`;
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
