import { LeaseLostError } from "@idempotent-checkout/idempotency";
import {
  isRequirementFailure,
  raw,
  requirement,
  type Sql,
  type StatementWrites,
  sql,
} from "@idempotent-checkout/idempotency/sql";
import { type Db, newId, rawQuery, type Tx } from "../db";
import { domainErrors } from "../errors";
import { failpoint } from "../failpoints";
import { type Payment, Prisma } from "../generated/prisma/client";
import type { FirstPhase, KeyOwner } from "../keys";
import { ensureHouseAccounts, HOUSE_ACCOUNTS_MISSING, paymentCapture } from "../ledger";
import { askProvider, callProvider } from "../operation/provider-call";
import { resumeRow } from "../operation/resume";
import {
  type PaymentFacts,
  paymentSucceededEvent,
  recordPaymentEvent,
  type SettledPaymentColumns,
} from "../outbox";
import type { Charge, PaymentProvider } from "../provider";
import { paymentView } from "./views";

export const PAYMENT_METHODS = ["pm_card_visa", "pm_card_declined", "pm_card_slow"] as const;
export interface PaymentRequest {
  orderId: string;
  paymentMethod: string;
}
export interface PaymentDeps {
  prisma: Db;
  provider: PaymentProvider;
}

/** The payment procedure's identity in the key store; the completer finds its keys by it. */
export const PAYMENT_PROCEDURE = "payments.create";

/** The recovery points of a payment, after Brandur Leach's atomic phases for Stripe. */
export const RECOVERY = { started: "started", paymentCreated: "payment_created" } as const;

/** What the phases need of a pending payment. */
export type PendingPayment = Pick<
  Payment,
  "id" | "orderId" | "accountId" | "amountMinor" | "currency" | "paymentMethod" | "providerKey"
>;
/** A settled payment as its event reports it. */
type SettledPayment = PaymentFacts & Pick<Payment, "status">;
/** A pending payment with the time a charge request for it may last have left (null: never). */
type TrackedPayment = PendingPayment & { chargeRequestedAt: string | null };
interface PaymentRow {
  id: string;
  order_id: string;
  account_id: string;
  amount_minor: number;
  currency: string;
  payment_method: string;
  provider_key: string;
  charge_requested_at: string | Date | null;
}
const pendingFromRow = (r: PaymentRow): TrackedPayment => ({
  id: r.id,
  orderId: r.order_id,
  accountId: r.account_id,
  amountMinor: r.amount_minor,
  currency: r.currency,
  paymentMethod: r.payment_method,
  providerKey: r.provider_key,
  chargeRequestedAt: r.charge_requested_at === null ? null : new Date(r.charge_requested_at).toISOString(),
});

/**
 * Phase 1 for a fresh key, in the claim's own statement (decision 0016): the pending payment
 * is inserted with the key. When it cannot be (no such order, or another payment holds it) the
 * claim runs again without it and executePayment's own phase 1 decides the answer.
 */
export const createPaymentPhase: FirstPhase<PaymentRequest> = {
  recoveryPoint: RECOVERY.paymentCreated,
  statement: (request, ctx, key, b) => {
    const created = b.cte(
      insertPendingPayment(ctx.account.id, request, key.id, key.derivedKey("charge"), key.isNew),
      "payment_created",
    );
    return {
      done: sql`EXISTS (SELECT 1 FROM ${created})`,
      result: sql`(SELECT row_to_json(p) FROM ${created} p)`,
    };
  },
  // A refused request (429) takes its pending payment back: nothing was sent for it yet.
  undo: (tx, keyId) =>
    tx.$executeRaw`DELETE FROM payments WHERE idempotency_key_id = ${keyId} AND status = 'pending'`,
};

const PAYMENT_COLUMNS = raw(
  "id, order_id, account_id, amount_minor, currency, payment_method, provider_key, charge_requested_at",
);

// The charge request is marked in the insert itself (charge_requested_at = now()): the request
// follows the commit of this phase directly, so the mark costs no statement of its own. A crash
// in between leaves a payment marked that never reached the provider: it is then re-sent with the
// same provider key, never abandoned, which is the safe side.
// The partial unique index decides between two tabs paying one order: no row means another
// pending or succeeded payment holds the order (or the order is not the caller's).
function insertPendingPayment(
  accountId: string,
  request: PaymentRequest,
  keyId: Sql,
  providerKey: Sql,
  when: Sql = sql`true`,
) {
  return sql`
    INSERT INTO payments (id, order_id, account_id, idempotency_key_id, amount_minor, currency, payment_method, provider_key, charge_requested_at)
    SELECT ${newId()}::uuid, o.id, o.account_id, ${keyId}::bigint, o.total_minor, o.currency, ${request.paymentMethod}, ${providerKey}, now()
      FROM orders o WHERE o.id = ${request.orderId}::uuid AND o.account_id = ${accountId}::uuid AND ${when}
    ON CONFLICT DO NOTHING
    RETURNING ${PAYMENT_COLUMNS}`;
}

/**
 * Runs (or resumes, after a takeover) one payment: phase 1 creates the pending payment, phase 2
 * charges the provider with a key derived from ours, phase 3 books the ledger, settles the
 * payment and completes the key in one transaction. The same code serves the client's request,
 * its retries and the completer.
 */
export async function executePayment(
  deps: PaymentDeps,
  owner: KeyOwner,
  accountId: string,
  request: PaymentRequest,
  opts: {
    providerFault?: string;
    /**
     * The completer: a payment older than this (the database's clock, from its creation) for
     * which no charge request ever left is ended as abandoned, with nothing charged.
     */
    abandonAfterSeconds?: number;
  } = {},
) {
  const created = owner.phaseResult<PaymentRow>(RECOVERY.paymentCreated);
  const resumed = !created && owner.recoveryPoint !== RECOVERY.started;
  const found = resumed ? await resumePayment(deps.prisma, owner.keyId, opts.abandonAfterSeconds) : null;
  const payment: TrackedPayment = created
    ? pendingFromRow(created)
    : found
      ? found.payment
      : await owner.atomicPhase(RECOVERY.paymentCreated, (tx) =>
          createPendingPayment(tx, owner, accountId, request),
        );
  failpoint("after_payment_created");

  // Proven by our own durable record: no charge request for it ever left, so nothing can have
  // been charged. Only such a payment is abandoned; one whose request may be out is driven to
  // the provider's answer below, with the same provider key (at most one charge).
  if (found?.abandonable) {
    return owner.fail(domainErrors.paymentAbandoned(payment), (tx) => markAbandoned(tx, payment));
  }
  // A resumed attempt may follow one whose charge went through: the provider forgets keys
  // (Stripe after 24 h), so ask before charging again rather than trust the key to replay.
  const earlier = resumed ? await findEarlierCharge(deps.provider, payment) : null;
  const charge = earlier ?? (await chargeProvider(deps, payment, resumed, opts.providerFault));
  failpoint("after_provider_charge");
  if ("refused" in charge) {
    return owner.fail(domainErrors.paymentRefused(payment, charge.refused), (tx) =>
      markFailed(tx, payment, "provider_refused", charge.refused),
    );
  }

  if (charge.status === "declined") {
    return owner.fail(
      domainErrors.paymentDeclined(payment, charge.failureCode, charge.failureMessage),
      async (tx) => {
        const settled = await settlePayment(tx, payment, charge, "declined");
        await recordPaymentEvent(tx, settled, "payment.declined");
      },
    );
  }
  const view = paymentView({ ...payment, status: "succeeded", providerChargeId: charge.id });
  try {
    return await owner.completeWith(settleAndBook(payment, charge), view);
  } catch (error) {
    // A currency's first payment: create its house accounts, then book once more.
    if (!isRequirementFailure(error, HOUSE_ACCOUNTS_MISSING)) throw error;
    await ensureHouseAccounts(deps.prisma, payment.currency);
    return owner.completeWith(settleAndBook(payment, charge), view);
  }
}

/** Settled by another attempt that took our key over: this one answers 409 (LeaseLostError). */
export const PAYMENT_NOT_PENDING = requirement("payments.not_pending", { fenced: true });
/** The payment's order is gone. */
export const ORDER_NOT_FOUND = requirement("payments.order_not_found");

/**
 * Phase 3 as one statement (decision 0016): settle the payment, book the ledger, mark the order
 * paid and write the outbox event; the key's completion joins them in the same statement. Each
 * module adds its own parts and requirements; the ledger and the outbox read the settled row
 * through the typed reference `settled`.
 */
export function settleAndBook(
  payment: PendingPayment,
  charge: Pick<Charge, "id" | "failureCode" | "failureMessage">,
): StatementWrites {
  return (b) => {
    const settled = b.cte<SettledPaymentColumns>(
      sql`
        UPDATE payments
           SET status = 'succeeded', provider_charge_id = ${charge.id}, failure_code = ${charge.failureCode},
               failure_message = ${charge.failureMessage}, updated_at = now()
         WHERE id = ${payment.id}::uuid AND status = 'pending'
        RETURNING id, order_id, account_id, amount_minor, currency, provider_charge_id, updated_at`,
      "settled",
    );
    b.require(sql`(SELECT count(*) FROM ${settled}) = 1`, PAYMENT_NOT_PENDING);
    paymentCapture(b, {
      paymentId: payment.id,
      amountMinor: payment.amountMinor,
      currency: payment.currency,
      description: `Payment ${payment.id} for order ${payment.orderId}`,
      providerChargeId: charge.id,
    });
    const orderPaid = b.cte<"id">(
      sql`UPDATE orders SET status = 'paid', updated_at = now() WHERE id = ${payment.orderId}::uuid RETURNING id`,
      "order_paid",
    );
    b.require(sql`(SELECT count(*) FROM ${orderPaid}) = 1`, ORDER_NOT_FOUND);
    paymentSucceededEvent(b, payment.id, settled);
  };
}

async function createPendingPayment(
  tx: Tx,
  owner: KeyOwner,
  accountId: string,
  request: PaymentRequest,
): Promise<TrackedPayment> {
  const keyId = sql`${owner.keyId}`;
  const providerKey = sql`${owner.derivedKey("charge")}`;
  const [row] = await rawQuery<PaymentRow>(tx, insertPendingPayment(accountId, request, keyId, providerKey));
  if (row) return pendingFromRow(row);
  const order = await tx.order.findFirst({ where: { id: request.orderId, accountId } });
  if (!order) throw domainErrors.notFound("Order");
  const existing = await tx.payment.findFirst({
    where: { orderId: order.id, status: { in: ["pending", "succeeded"] } },
  });
  if (existing) throw domainErrors.orderAlreadyPaid(existing);
  throw new Error(`payment for key ${owner.keyId} conflicts with an existing payment`);
}

/**
 * The charge an earlier attempt made for this payment, found by the provider key we derived or,
 * should the provider have forgotten keys, by the payment id in its metadata. The oldest wins;
 * any other is a duplicate for the reconciler to report.
 */
async function findEarlierCharge(provider: PaymentProvider, payment: PendingPayment): Promise<Charge | null> {
  return askProvider(async () => {
    for (const filter of [
      { idempotencyKey: payment.providerKey },
      { metadata: { payment_id: payment.id } },
    ]) {
      for await (const charge of provider.listCharges(filter)) {
        if (charge.metadata.payment_id === payment.id) return checkedCharge(charge, payment);
      }
    }
    return null;
  }, domainErrors.paymentInFlightAtProvider);
}

function checkedCharge(charge: Charge, payment: PendingPayment): Charge {
  if (charge.amount !== payment.amountMinor || charge.currency.toUpperCase() !== payment.currency) {
    throw new Error(`provider charge ${charge.id} does not match payment ${payment.id}`);
  }
  return charge;
}

/**
 * Provider answers that say this request can never succeed, whatever earlier attempts did. Any
 * other 4xx (a gateway's 403, a rotated secret's 401, a 404 from a proxy) proves nothing about a
 * charge an earlier attempt may have made: it is treated as unavailable, never as a refusal that
 * would free the order for a second charge.
 */
const DEFINITE_REFUSALS = new Set(["payment_method_unknown", "parameter_invalid"]);

/**
 * The charge, or why the provider refused the request for good. A durable mark that a request
 * may be out commits before every request (for a fresh payment, with its creation); when the
 * request provably never left (connection refused), the mark is taken back.
 */
async function chargeProvider(
  deps: PaymentDeps,
  payment: TrackedPayment,
  resumed: boolean,
  fault: string | undefined,
): Promise<Charge | { refused: string }> {
  const outcome = await callProvider(
    deps.prisma,
    CHARGE_TERMS,
    { id: payment.id, requestedAt: payment.chargeRequestedAt, resumed },
    () =>
      deps.provider.createCharge(
        {
          amount: payment.amountMinor,
          currency: payment.currency,
          paymentMethod: payment.paymentMethod,
          metadata: { source: "idempotent-checkout", payment_id: payment.id, order_id: payment.orderId },
        },
        payment.providerKey,
        fault ? { fault } : undefined,
      ),
  );
  return "made" in outcome ? checkedCharge(outcome.made, payment) : { refused: outcome.refused };
}

/** Where a payment keeps its "a charge request may have left" mark. */
const CHARGE_REQUESTED = { table: "payments", column: "charge_requested_at" } as const;
const CHARGE_TERMS = {
  mark: CHARGE_REQUESTED,
  definiteRefusals: DEFINITE_REFUSALS,
  inFlight: domainErrors.paymentInFlightAtProvider,
};

/**
 * A payment an earlier attempt created, and whether it may be abandoned now: no charge request
 * ever left for it and it is older than `abandonAfterSeconds`, both by the database.
 */
async function resumePayment(prisma: Db, keyId: bigint, abandonAfterSeconds: number | undefined) {
  const found = await resumeRow<PaymentRow>(prisma, PAYMENT_ROWS, keyId, abandonAfterSeconds);
  return { payment: pendingFromRow(found.row), abandonable: found.abandonable };
}

const PAYMENT_ROWS = {
  columns: PAYMENT_COLUMNS,
  from: sql`payments`,
  alias: "payments",
  mark: CHARGE_REQUESTED,
};

/**
 * The payment's end, fenced by its status: when it is no longer pending, another attempt
 * settled it after taking our key over, so this one must roll back and answer 409. Stamped
 * with the database's clock, like every other time in the row.
 */
async function settleOnce(
  tx: Tx,
  payment: PendingPayment,
  data: {
    status: string;
    providerChargeId?: string | null;
    failureCode: string | null;
    failureMessage: string | null;
  },
  extra: Prisma.Sql = Prisma.sql`true`,
) {
  const rows = await tx.$queryRaw<SettledPayment[]>`
    UPDATE payments
       SET status = ${data.status}, provider_charge_id = coalesce(${data.providerChargeId ?? null}, provider_charge_id),
           failure_code = ${data.failureCode}, failure_message = ${data.failureMessage}, updated_at = now()
     WHERE id = ${payment.id}::uuid AND status = 'pending' AND ${extra}
    RETURNING id, order_id AS "orderId", account_id AS "accountId", amount_minor AS "amountMinor", currency,
              status, provider_charge_id AS "providerChargeId", failure_code AS "failureCode",
              updated_at AS "updatedAt"`;
  const row = rows[0];
  if (!row) throw new LeaseLostError();
  return row;
}

function markFailed(tx: Tx, payment: PendingPayment, failureCode: string, failureMessage: string) {
  return settleOnce(tx, payment, { status: "failed", failureCode, failureMessage });
}

/** Abandoned only while no charge request has ever left: checked again in the write itself. */
function markAbandoned(tx: Tx, payment: PendingPayment) {
  return settleOnce(
    tx,
    payment,
    {
      status: "failed",
      failureCode: "abandoned",
      failureMessage: "The payment was abandoned before any request reached the provider.",
    },
    Prisma.sql`charge_requested_at IS NULL`,
  );
}

function settlePayment(tx: Tx, payment: PendingPayment, charge: Charge, status: "succeeded" | "declined") {
  return settleOnce(tx, payment, {
    status,
    providerChargeId: charge.id,
    failureCode: charge.failureCode,
    failureMessage: charge.failureMessage,
  });
}
