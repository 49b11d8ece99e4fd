/**
 * What confirming a PaymentIntent and completing its 3-D Secure challenge share: the card's answer
 * as Stripe gives it (a charge and the intent's next state, or a decline), and the statements that
 * read and write intents and charges in the caller's transaction.
 */
import type { PoolClient } from "pg";
import { type EventRecorder, type EventRequest, type NewEvent, recordEvents } from "./events";
import { type Reply, stripeError } from "./http";
import { type Charge, changedFrom, newCharge, type PaymentIntent, unixSeconds } from "./objects";
import { SCHEMA } from "./pg";
import { type AuthorizationOutcome, paymentMethodObject } from "./test-cards";

/** How long Stripe holds an uncaptured card authorization: 7 days. */
export const STRIPE_AUTHORIZATION_TTL_SECONDS = 7 * 24 * 3600;

export interface CardResult {
  next: PaymentIntent;
  charge: Charge | null;
  events: NewEvent[];
  reply: Reply;
}

/**
 * The card's answer to `pi` (status still as `before`): succeeded, or requires_capture with an
 * uncaptured charge for capture_method manual; or a decline, the intent back in
 * requires_payment_method with its failed charge, answered 402 card_error.
 */
export function cardResult(
  pi: PaymentIntent,
  before: PaymentIntent,
  paymentMethod: string,
  outcome: AuthorizationOutcome,
  now: Date,
  chargeId: string,
  authorizationTtlSeconds: number,
): CardResult {
  if (outcome.kind === "succeeds") {
    const manual = pi.capture_method === "manual";
    const charge = newCharge(chargeId, now, pi, paymentMethod, {
      captured: !manual,
      captureBefore: unixSeconds(now) + authorizationTtlSeconds,
    });
    const next: PaymentIntent = {
      ...pi,
      status: manual ? "requires_capture" : "succeeded",
      amount_capturable: manual ? pi.amount : 0,
      amount_received: manual ? 0 : pi.amount,
      latest_charge: charge.id,
      last_payment_error: null,
      next_action: null,
    };
    const previous = changedFrom(before, next);
    return {
      next,
      charge,
      events: [
        { type: "charge.succeeded", object: charge },
        manual
          ? { type: "payment_intent.amount_capturable_updated", object: next, previous }
          : { type: "payment_intent.succeeded", object: next, previous },
      ],
      reply: { status: 200, body: next },
    };
  }
  const charge = newCharge(chargeId, now, pi, paymentMethod, {
    failureCode: outcome.code,
    declineCode: outcome.declineCode,
    message: outcome.message,
  });
  const pm = paymentMethodObject(paymentMethod, unixSeconds(now));
  const next: PaymentIntent = {
    ...pi,
    status: "requires_payment_method",
    payment_method: null,
    latest_charge: charge.id,
    next_action: null,
    last_payment_error: {
      type: "card_error",
      code: outcome.code,
      decline_code: outcome.declineCode,
      message: outcome.message,
      charge: charge.id,
      doc_url: `https://stripe.com/docs/error-codes/${outcome.code.replaceAll("_", "-")}`,
      payment_method: pm,
    },
  };
  return {
    next,
    charge,
    events: [
      { type: "charge.failed", object: charge },
      { type: "payment_intent.payment_failed", object: next, previous: changedFrom(before, next) },
    ],
    reply: stripeError(402, "card_error", outcome.message, {
      code: outcome.code,
      decline_code: outcome.declineCode,
      charge: charge.id,
      payment_intent: next,
      payment_method: pm,
    }),
  };
}

export async function lockIntent(client: PoolClient, id: string): Promise<PaymentIntent | null> {
  const found = await client.query<{ object: PaymentIntent }>(
    `SELECT object FROM ${SCHEMA}.payment_intents WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return found.rows[0]?.object ?? null;
}

/** Stores the intent as it now is: inserted when `created` is given (a new one), else updated. */
export async function writeIntent(client: PoolClient, pi: PaymentIntent, created?: Date): Promise<void> {
  const values = [pi.id, pi.status, JSON.stringify(pi.metadata), JSON.stringify(pi)];
  if (created === undefined) {
    await client.query(
      `UPDATE ${SCHEMA}.payment_intents SET status = $2, metadata = $3, object = $4 WHERE id = $1`,
      values,
    );
    return;
  }
  await client.query(
    `INSERT INTO ${SCHEMA}.payment_intents (id, created, status, amount, currency, metadata, object)
     VALUES ($1, $5, $2, $6, $7, $3, $4)`,
    [...values, created, pi.amount, pi.currency],
  );
}

export async function insertCharge(client: PoolClient, charge: Charge, created: Date): Promise<void> {
  await client.query(
    `INSERT INTO ${SCHEMA}.charges (id, payment_intent, created, amount_captured, amount_refunded, object)
     VALUES ($1, $2, $3, $4, 0, $5)`,
    [charge.id, charge.payment_intent, created, charge.amount_captured, JSON.stringify(charge)],
  );
}

/** Cancels a locked intent that took no money (a request's, or an expired authorization's). */
export async function cancelAndStore(
  client: PoolClient,
  pi: PaymentIntent,
  reason: string | null,
  request: EventRequest,
  recorder: EventRecorder,
): Promise<PaymentIntent> {
  const next: PaymentIntent = {
    ...pi,
    status: "canceled",
    amount_capturable: 0,
    canceled_at: unixSeconds(new Date()),
    cancellation_reason: reason,
    next_action: null,
  };
  await writeIntent(client, next);
  await recordEvents(
    client,
    request,
    [{ type: "payment_intent.canceled", object: next, previous: changedFrom(pi, next) }],
    recorder,
  );
  return next;
}
