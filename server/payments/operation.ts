import {
  isRequirementFailure,
  type Sql,
  type StatementWrites,
  sql,
} from "@idempotent-checkout/idempotency/sql";
import { type Db, newId, rawQuery, type Tx } from "../db";
import { env } from "../env";
import { domainErrors } from "../errors";
import type { FirstPhase, KeyOwner } from "../keys";
import { ensureHouseAccounts, HOUSE_ACCOUNTS_MISSING } from "../ledger";
import { keyedOperation, writeAlongside } from "../operation";
import { recordPaymentEvent } from "../outbox";
import type { Charge, CreateChargeInput, PaymentProvider } from "../provider";
import { awaitingAction, captureDeadline } from "./action";
import { settleAndBook, settleAuthorized, settleUnpaid } from "./settle";
import { PAYMENT_COLUMNS, type PaymentRow, type TrackedPayment, trackedFromRow } from "./tracked";
import { paymentView, type TPaymentView } from "./views";

export const PAYMENT_METHODS = ["pm_card_visa", "pm_card_declined", "pm_card_slow"] as const;
export type CaptureMethod = "automatic" | "manual";
export interface PaymentRequest {
  orderId: string;
  paymentMethod: string;
  /** Absent: the merchant's setting (PAYMENT_CAPTURE_METHOD). */
  captureMethod?: CaptureMethod | undefined;
  /** Where the shopper comes back after a 3-D Secure step. */
  returnUrl?: string | undefined;
}
export interface PaymentDeps {
  prisma: Db;
  provider: PaymentProvider;
}
/** The payment as the operation runs it: the request and the account it is paid from. */
type AccountPayment = PaymentRequest & { accountId: string };

/** The payment procedure's identity in the key store; the completer finds its keys by it. */
export const PAYMENT_PROCEDURE = "payments.create";
/** Phase 1's recovery point, after Brandur Leach's atomic phases for Stripe. */
const PAYMENT_CREATED = "payment_created";
export const DEFAULT_ABANDON_AFTER_SECONDS = 3600;

/**
 * Provider answers that say a charge request can never succeed, whatever earlier attempts did. Any
 * other 4xx (a gateway's 403, a rotated secret's 401, a 404 from a proxy) proves nothing about a
 * charge an earlier attempt may have made: it is treated as unavailable, never as a refusal that
 * would free the order for a second charge.
 */
const REFUSED_PARAMETERS = new Set([
  "parameter_missing",
  "parameter_unknown",
  "parameter_invalid",
  "parameter_invalid_integer",
  "parameter_invalid_boolean",
  "amount_too_small",
  "amount_too_large",
  "amount_not_in_steps",
]);
/** A request the provider refused for its parameters, or for a payment method it does not have. */
const definiteRefusal = ({ code, param }: { code: string; param?: string | undefined }) =>
  REFUSED_PARAMETERS.has(code) || (code === "resource_missing" && param === "payment_method");
/** Where a payment keeps its "a charge request may have left" mark. */
const CHARGE_REQUESTED = { table: "payments", column: "charge_requested_at" } as const;

/**
 * A payment: phase 1 creates the pending payment (with the claim, when it can), phase 2 charges
 * the provider with a key derived from ours, phase 3 books the ledger, settles the payment and
 * completes the key in one statement. A payment whose attempt died is driven by the completer
 * through the same phases; one for which no charge request ever left is failed once
 * `abandonAfterSeconds` old (nothing charged; the order is free to pay again).
 */
export const payment = keyedOperation<
  PaymentDeps,
  AccountPayment,
  TrackedPayment,
  Charge,
  TPaymentView,
  CreateChargeInput
>({
  procedure: PAYMENT_PROCEDURE,
  failpoints: { created: "after_payment_created", provider: "after_provider_charge" },
  createdPoint: PAYMENT_CREATED,
  rows: {
    columns: PAYMENT_COLUMNS,
    from: sql`payments`,
    alias: "payments",
    mark: CHARGE_REQUESTED,
    fromRow: trackedFromRow,
  },
  create: createPendingPayment,
  requestOf: (key) => ({ ...(key.requestParams as PaymentRequest), accountId: key.accountId }),
  abandonAfterSeconds: DEFAULT_ABANDON_AFTER_SECONDS,
  provider: {
    definiteRefusal,
    inFlight: domainErrors.paymentInFlightAtProvider,
    list: (deps, filter) => deps.provider.listCharges(filter),
    rowIdKey: "payment_id",
    request: (row) => ({
      amount: row.amountMinor,
      currency: row.currency,
      paymentMethod: row.paymentMethod,
      metadata: { source: "idempotent-checkout", payment_id: row.id, order_id: row.orderId },
      captureMethod: row.captureMethod === "manual" ? "manual" : "automatic",
      ...(row.returnUrl ? { returnUrl: row.returnUrl } : {}),
    }),
    send: (deps, request, key, opts) => deps.provider.createCharge(request, key, opts),
    check: checkedCharge,
  },
  abandoned: (row) => domainErrors.paymentAbandoned(row),
  refused: async (_deps, row, refusal) => domainErrors.paymentRefused(row, refusal.refused),
  finish: finishPayment,
});

/** Runs (or resumes) one payment for the account: the client's request and its retries. */
export function executePayment(
  deps: PaymentDeps,
  owner: KeyOwner,
  accountId: string,
  request: PaymentRequest,
  opts: { providerFault?: string; abandonAfterSeconds?: number } = {},
) {
  return payment.execute(deps, owner, { ...request, accountId }, opts);
}

/**
 * Phase 3: a decline is stored and replayed; a payment the provider canceled ends canceled (nothing
 * taken); one awaiting the shopper's 3-D Secure step is answered as such, not stored (./action);
 * one processing is not an answer yet; an authorization is held with its deadline; a charge is
 * booked with the key's completion. `alongside` commits with the completion.
 */
export async function finishPayment(
  deps: PaymentDeps,
  owner: KeyOwner,
  row: TrackedPayment,
  charge: Charge,
  alongside?: Sql,
): Promise<TPaymentView> {
  if (charge.status === "pending") throw domainErrors.paymentInFlightAtProvider(5);
  if (charge.status === "requires_action") {
    const next = await awaitingAction(deps, owner, row, charge);
    // Canceled at its deadline (or finished meanwhile): settled as the provider now says.
    return "view" in next ? next.view : finishPayment(deps, owner, row, next.charge, alongside);
  }
  if (charge.status === "declined") {
    return owner.fail(
      domainErrors.paymentDeclined(row, charge.failureCode, charge.failureMessage),
      async (tx) => {
        await recordPaymentEvent(tx, await settleUnpaid(tx, row, charge, "declined"), "payment.declined");
        await writeAlongside(tx, alongside);
      },
    );
  }
  if (charge.status === "canceled") {
    const reason = charge.cancellationReason ?? "canceled";
    return owner.fail(domainErrors.paymentCanceled(row, reason), async (tx) => {
      const ended = await settleUnpaid(tx, row, { ...charge, failureCode: reason }, "canceled");
      await recordPaymentEvent(tx, ended, "payment.canceled");
      await writeAlongside(tx, alongside);
    });
  }
  const authorized = charge.status === "authorized";
  const captureBefore = captureDeadline(charge);
  const view = authorized
    ? paymentView({ ...row, status: "authorized", providerChargeId: charge.id, captureBefore })
    : paymentView({ ...row, status: "succeeded", providerChargeId: charge.id });
  const writes: StatementWrites = (b) => {
    if (authorized) settleAuthorized(row, charge, captureBefore)(b);
    else settleAndBook(row, charge)(b);
    if (alongside) b.cte(alongside, "alongside");
  };
  try {
    return await owner.completeWith(writes, view);
  } catch (error) {
    // A currency's first payment: create its house accounts, then book once more.
    if (!isRequirementFailure(error, HOUSE_ACCOUNTS_MISSING)) throw error;
    await ensureHouseAccounts(deps.prisma, row.currency);
    return owner.completeWith(writes, view);
  }
}

/**
 * Phase 1 for a fresh key, in the claim's own statement (decision 0016): the pending payment
 * is inserted with the key. When it cannot be (no such order, or another payment holds it) the
 * claim runs again without it and the operation's own phase 1 decides the answer.
 */
export const createPaymentPhase: FirstPhase<PaymentRequest> = {
  recoveryPoint: PAYMENT_CREATED,
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
    INSERT INTO payments (id, order_id, account_id, idempotency_key_id, amount_minor, currency, payment_method, provider_key,
                          charge_requested_at, capture_method, return_url)
    SELECT ${newId()}::uuid, o.id, o.account_id, ${keyId}::bigint, o.total_minor, o.currency, ${request.paymentMethod}, ${providerKey},
           now(), ${request.captureMethod ?? env.PAYMENT_CAPTURE_METHOD}, ${request.returnUrl ?? null}
      FROM orders o WHERE o.id = ${request.orderId}::uuid AND o.account_id = ${accountId}::uuid AND ${when}
    ON CONFLICT DO NOTHING
    RETURNING ${PAYMENT_COLUMNS}`;
}

async function createPendingPayment(
  tx: Tx,
  owner: KeyOwner,
  request: AccountPayment,
): Promise<TrackedPayment> {
  const keyId = sql`${owner.keyId}`;
  const providerKey = sql`${owner.derivedKey("charge")}`;
  const [row] = await rawQuery<PaymentRow>(
    tx,
    insertPendingPayment(request.accountId, request, keyId, providerKey),
  );
  if (row) return trackedFromRow(row);
  const order = await tx.order.findFirst({ where: { id: request.orderId, accountId: request.accountId } });
  if (!order) throw domainErrors.notFound("Order");
  const existing = await tx.payment.findFirst({
    where: { orderId: order.id, status: { in: ["pending", "authorized", "succeeded"] } },
  });
  if (existing) throw domainErrors.orderAlreadyPaid(existing);
  throw new Error(`payment for key ${owner.keyId} conflicts with an existing payment`);
}

function checkedCharge(charge: Charge, row: TrackedPayment): Charge {
  if (charge.amount !== row.amountMinor || charge.currency.toUpperCase() !== row.currency) {
    throw new Error(`provider charge ${charge.id} does not match payment ${row.id}`);
  }
  return charge;
}

/** The completer's pass over abandoned payments (tests and the worker's loop). */
export const completeAbandonedPayments = payment.complete;
