import { randomUUID } from "node:crypto";
import type { Db, Tx } from "../db";
import { domainErrors } from "../errors";
import { failpoint } from "../failpoints";
import type { Payment, Prisma } from "../generated/prisma/client";
import { type KeyOwner, LeaseLostError } from "../idempotency";
import { postPaymentCapture } from "../ledger";
import { recordPaymentEvent } from "../outbox";
import { type Charge, type PaymentProvider, ProviderError } from "./provider";
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

/** The recovery points of a payment, after Brandur Leach's atomic phases for Stripe. */
export const RECOVERY = { started: "started", paymentCreated: "payment_created" } as const;

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
    /** The completer, long after the Pay press: end a payment that never reached the provider. */
    abandonIfUncharged?: boolean;
  } = {},
) {
  const resumed = owner.recoveryPoint !== RECOVERY.started;
  const payment = resumed
    ? await deps.prisma.payment.findUniqueOrThrow({ where: { idempotencyKeyId: owner.keyId } })
    : await owner.atomicPhase(RECOVERY.paymentCreated, (tx) =>
        createPendingPayment(tx, owner, accountId, request),
      );
  failpoint("after_payment_created");

  // A resumed attempt may follow one whose charge went through: the provider forgets keys
  // (Stripe after 24 h), so ask before charging again rather than trust the key to replay.
  const earlier = resumed ? await findEarlierCharge(deps.provider, payment) : null;
  if (!earlier && opts.abandonIfUncharged) {
    return owner.fail(domainErrors.paymentAbandoned(payment), (tx) =>
      markFailed(tx, payment, "abandoned", "The payment was abandoned before it reached the provider."),
    );
  }
  const charge = earlier ?? (await chargeProvider(deps.provider, payment, opts.providerFault));
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
  return owner.complete(async (tx) => {
    const settled = await settlePayment(tx, payment, charge, "succeeded");
    await postPaymentCapture(tx, {
      paymentId: payment.id,
      amountMinor: payment.amountMinor,
      currency: payment.currency,
      description: `Payment ${payment.id} for order ${payment.orderId}`,
    });
    await tx.order.update({
      where: { id: payment.orderId },
      data: { status: "paid", updatedAt: new Date() },
    });
    await recordPaymentEvent(tx, settled, "payment.succeeded");
    return paymentView(settled);
  });
}

async function createPendingPayment(tx: Tx, owner: KeyOwner, accountId: string, request: PaymentRequest) {
  const order = await tx.order.findFirst({ where: { id: request.orderId, accountId } });
  if (!order) throw domainErrors.notFound("Order");
  const id = randomUUID();
  // The partial unique index decides between two tabs paying one order: no row means another
  // pending or succeeded payment holds the order.
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO payments (id, order_id, account_id, idempotency_key_id, amount_minor, currency, payment_method, provider_key)
    VALUES (${id}::uuid, ${order.id}::uuid, ${accountId}::uuid, ${owner.keyId}, ${order.totalMinor}, ${order.currency},
            ${request.paymentMethod}, ${owner.derivedKey("charge")})
    ON CONFLICT DO NOTHING
    RETURNING id`;
  if (inserted.length === 0) {
    const existing = await tx.payment.findFirst({
      where: { orderId: order.id, status: { in: ["pending", "succeeded"] } },
    });
    if (existing) throw domainErrors.orderAlreadyPaid(existing);
    throw new Error(`payment for key ${owner.keyId} conflicts with an existing payment`);
  }
  return tx.payment.findUniqueOrThrow({ where: { id } });
}

/**
 * The charge an earlier attempt made for this payment, found by the provider key we derived or,
 * should the provider have forgotten keys, by the payment id in its metadata. The oldest wins;
 * any other is a duplicate for the reconciler to report.
 */
async function findEarlierCharge(provider: PaymentProvider, payment: Payment): Promise<Charge | null> {
  try {
    for (const filter of [
      { idempotencyKey: payment.providerKey },
      { metadata: { payment_id: payment.id } },
    ]) {
      for await (const charge of provider.listCharges(filter)) {
        if (charge.metadata.payment_id === payment.id) return checkedCharge(charge, payment);
      }
    }
    return null;
  } catch (error) {
    if (error instanceof ProviderError) throw providerError(error);
    throw error;
  }
}

function checkedCharge(charge: Charge, payment: Payment): Charge {
  if (charge.amount !== payment.amountMinor || charge.currency.toUpperCase() !== payment.currency) {
    throw new Error(`provider charge ${charge.id} does not match payment ${payment.id}`);
  }
  return charge;
}

/** The provider's own "in flight" is ours too: the client is told to come back, not to fail. */
function providerError(error: ProviderError) {
  return error.kind === "conflict"
    ? domainErrors.paymentInFlightAtProvider(Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000)))
    : domainErrors.providerUnavailable(error.kind);
}

/**
 * Provider answers that say this request can never succeed, whatever earlier attempts did. Any
 * other 4xx (a gateway's 403, a rotated secret's 401, a 404 from a proxy) proves nothing about a
 * charge an earlier attempt may have made: it is treated as unavailable, never as a refusal that
 * would free the order for a second charge.
 */
const DEFINITE_REFUSALS = new Set(["payment_method_unknown", "parameter_invalid"]);

/** The charge, or why the provider refused the request for good. */
async function chargeProvider(
  provider: PaymentProvider,
  payment: Payment,
  fault: string | undefined,
): Promise<Charge | { refused: string }> {
  try {
    const charge = await provider.createCharge(
      {
        amount: payment.amountMinor,
        currency: payment.currency,
        paymentMethod: payment.paymentMethod,
        metadata: { source: "idempotent-checkout", payment_id: payment.id, order_id: payment.orderId },
      },
      payment.providerKey,
      fault ? { fault } : undefined,
    );
    return checkedCharge(charge, payment);
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.kind === "rejected" && error.code && DEFINITE_REFUSALS.has(error.code))
      return { refused: error.message };
    throw providerError(error);
  }
}

/**
 * The payment's end, fenced by its status: when it is no longer pending, another attempt
 * settled it after taking our key over, so this one must roll back and answer 409.
 */
async function settleOnce(tx: Tx, payment: Payment, data: Prisma.PaymentUpdateManyMutationInput) {
  const settled = await tx.payment.updateManyAndReturn({
    where: { id: payment.id, status: "pending" },
    data: { ...data, updatedAt: new Date() },
  });
  const row = settled[0];
  if (!row) throw new LeaseLostError();
  return row;
}

function markFailed(tx: Tx, payment: Payment, failureCode: string, failureMessage: string) {
  return settleOnce(tx, payment, { status: "failed", failureCode, failureMessage });
}

function settlePayment(tx: Tx, payment: Payment, charge: Charge, status: "succeeded" | "declined") {
  return settleOnce(tx, payment, {
    status,
    providerChargeId: charge.id,
    failureCode: charge.failureCode,
    failureMessage: charge.failureMessage,
  });
}
