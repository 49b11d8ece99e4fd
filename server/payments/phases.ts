import { randomUUID } from "node:crypto";
import type { Db } from "../db";
import { domainErrors } from "../errors";
import { failpoint } from "../failpoints";
import type { Payment } from "../generated/prisma/client";
import type { KeyOwner, Tx } from "../idempotency";
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
  opts: { providerFault?: string } = {},
) {
  const payment =
    owner.recoveryPoint === RECOVERY.started
      ? await owner.atomicPhase(RECOVERY.paymentCreated, (tx) =>
          createPendingPayment(tx, owner, accountId, request),
        )
      : await deps.prisma.payment.findUniqueOrThrow({ where: { idempotencyKeyId: owner.keyId } });
  failpoint("after_payment_created");

  const charge = await chargeProvider(deps.provider, payment, opts.providerFault);
  failpoint("after_provider_charge");
  if ("refused" in charge) {
    return owner.fail(domainErrors.paymentRefused(payment, charge.refused), (tx) =>
      tx.payment.update({
        where: { id: payment.id, status: "pending" },
        data: {
          status: "failed",
          failureCode: "provider_refused",
          failureMessage: charge.refused,
          updatedAt: new Date(),
        },
      }),
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
    if (charge.amount !== payment.amountMinor || charge.currency.toUpperCase() !== payment.currency) {
      throw new Error(`provider charge ${charge.id} does not match payment ${payment.id}`);
    }
    return charge;
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.kind === "rejected" && error.code && DEFINITE_REFUSALS.has(error.code))
      return { refused: error.message };
    throw domainErrors.providerUnavailable(error.kind);
  }
}

async function settlePayment(tx: Tx, payment: Payment, charge: Charge, status: "succeeded" | "declined") {
  return tx.payment.update({
    where: { id: payment.id, status: "pending" },
    data: {
      status,
      providerChargeId: charge.id,
      failureCode: charge.failureCode,
      failureMessage: charge.failureMessage,
      updatedAt: new Date(),
    },
  });
}
