/**
 * PaymentIntents: create (and confirm in the same request), confirm, capture, cancel, retrieve,
 * list and search, with the state machine Stripe documents for card payments:
 *
 *   requires_payment_method ─(payment_method)→ requires_confirmation ─confirm→
 *     succeeded                      (capture_method automatic / automatic_async)
 *     requires_capture ─capture→ succeeded   (capture_method manual)
 *     requires_action                (a card that needs 3D Secure; its challenge is not simulated)
 *     requires_payment_method + last_payment_error, answered 402 card_error (a decline)
 *   any state but succeeded / canceled ─cancel→ canceled
 *
 * Each change writes the intent, its charge and their events in the request's transaction.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { PoolClient } from "pg";
import { amountProblem } from "../shared/currency";
import { type EventRecorder, type EventRequest, type NewEvent, recordEvents } from "./events";
import { notFound, type Reply, stripeError } from "./http";
import {
  type CaptureMethod,
  type Charge,
  changedFrom,
  type IntentStatus,
  newCharge,
  newPaymentIntent,
  type PaymentIntent,
  unixSeconds,
} from "./objects";
import { ParamError, type Params } from "./params";
import { SCHEMA, timeOrderedId } from "./pg";
import { paymentMethodObject, TEST_CARDS } from "./test-cards";

export interface IntentContext {
  client: PoolClient;
  request: EventRequest;
  recorder: EventRecorder;
  /** How long `pm_card_slow` takes. */
  slowCardMs: number;
}

const CAPTURE_METHODS = ["automatic", "automatic_async", "manual"] as const;
const CANCELLATION_REASONS = ["duplicate", "fraudulent", "requested_by_customer", "abandoned"] as const;
const CANCELABLE: IntentStatus[] = [
  "requires_payment_method",
  "requires_capture",
  "requires_confirmation",
  "requires_action",
  "processing",
];

/** A payment method the simulator knows, or Stripe's 404 for an unknown PaymentMethod. */
function knownPaymentMethod(id: string | undefined, param = "payment_method"): string | undefined {
  if (id === undefined) return undefined;
  if (!TEST_CARDS.has(id))
    throw new ParamError(`No such PaymentMethod: '${id}'`, param, "resource_missing", 400);
  return id;
}

/** The parameters of `POST /v1/payment_intents`, checked before anything is stored. */
export function readCreate(params: Params) {
  params.only(
    "amount",
    "currency",
    "payment_method",
    "confirm",
    "capture_method",
    "metadata",
    "return_url",
    "description",
    "allowed_payment_method_types",
    "automatic_payment_methods",
  );
  const input = {
    amount: params.amount("amount", { required: true }) as number,
    currency: params.currency("currency"),
    paymentMethod: knownPaymentMethod(params.string("payment_method")) ?? null,
    confirm: params.boolean("confirm") ?? false,
    captureMethod: params.oneOf("capture_method", CAPTURE_METHODS) ?? ("automatic_async" as CaptureMethod),
    metadata: params.metadata() ?? {},
    returnUrl: params.string("return_url", { max: 2048 }) ?? null,
    description: params.string("description", { max: 1000 }) ?? null,
  };
  const types = params.strings("allowed_payment_method_types");
  if (types?.some((t) => t !== "card"))
    throw new ParamError(
      "The simulator takes card payments only.",
      "allowed_payment_method_types",
      "parameter_invalid",
    );
  // Cards never redirect, so both settings of allow_redirects confirm without a return_url here.
  const automatic = params.hash("automatic_payment_methods")?.only("enabled", "allow_redirects");
  automatic?.boolean("enabled");
  automatic?.oneOf("allow_redirects", ["always", "never"] as const);
  // What Stripe takes in the currency: its minimum, maximum and steps (decision 0175). A currency
  // Stripe does not list is taken, unlike Stripe: tests invent codes to keep their ledgers apart.
  const problem = amountProblem(input.amount, input.currency, "charge");
  if (problem && problem.code !== "currency_unknown")
    throw new ParamError(problem.message, "amount", problem.code);
  if (input.confirm && !input.paymentMethod)
    throw new ParamError(
      "You cannot confirm this PaymentIntent because it's missing a payment method.",
      "payment_method",
      "parameter_missing",
    );
  return input;
}

export function readConfirm(params: Params) {
  params.only("payment_method", "return_url", "capture_method");
  return {
    paymentMethod: knownPaymentMethod(params.string("payment_method")),
    returnUrl: params.string("return_url", { max: 2048 }) ?? null,
    captureMethod: params.oneOf("capture_method", CAPTURE_METHODS),
  };
}

export function readCapture(params: Params) {
  params.only("amount_to_capture", "metadata");
  return { amountToCapture: params.amount("amount_to_capture"), metadata: params.metadata() };
}

export function readCancel(params: Params) {
  params.only("cancellation_reason");
  return { reason: params.oneOf("cancellation_reason", CANCELLATION_REASONS) ?? null };
}

export async function createIntent(ctx: IntentContext, input: ReturnType<typeof readCreate>): Promise<Reply> {
  const now = new Date();
  const pi = newPaymentIntent(timeOrderedId("pi"), now, input);
  const events: NewEvent[] = [{ type: "payment_intent.created", object: { ...pi } }];
  if (!input.confirm) {
    await writeIntent(ctx.client, pi, now);
    await recordEvents(ctx.client, ctx.request, events, ctx.recorder);
    return { status: 200, body: pi };
  }
  // Inserted once, in its confirmed state: one statement fewer on a checkout's path.
  return confirmAndStore(ctx, pi, { returnUrl: input.returnUrl }, events, pi, now);
}

async function lockIntent(client: PoolClient, id: string): Promise<PaymentIntent | null> {
  const found = await client.query<{ object: PaymentIntent }>(
    `SELECT object FROM ${SCHEMA}.payment_intents WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return found.rows[0]?.object ?? null;
}

function unexpectedState(pi: PaymentIntent, action: string, allowed: IntentStatus[]): Reply {
  return stripeError(
    400,
    "invalid_request_error",
    `You cannot ${action} this PaymentIntent because it has a status of ${pi.status}. ` +
      `Only a PaymentIntent with one of the following statuses may be ${action === "cancel" ? "canceled" : `${action}d`}: ${allowed.join(", ")}.`,
    { code: "payment_intent_unexpected_state", payment_intent: pi },
  );
}

export async function confirmIntent(
  ctx: IntentContext,
  id: string,
  input: ReturnType<typeof readConfirm>,
): Promise<Reply> {
  const pi = await lockIntent(ctx.client, id);
  if (!pi) return notFound("payment_intent", id, "intent");
  const confirmable: IntentStatus[] = ["requires_payment_method", "requires_confirmation", "requires_action"];
  if (!confirmable.includes(pi.status)) return unexpectedState(pi, "confirm", confirmable);
  const paymentMethod = input.paymentMethod ?? pi.payment_method;
  if (!paymentMethod) {
    return stripeError(
      400,
      "invalid_request_error",
      "You cannot confirm this PaymentIntent because it's missing a payment method. Update it with a payment_method or pass one to confirm.",
      { code: "payment_intent_unexpected_state", payment_intent: pi },
    );
  }
  const next: PaymentIntent = {
    ...pi,
    payment_method: paymentMethod,
    capture_method: input.captureMethod ?? pi.capture_method,
  };
  return confirmAndStore(ctx, next, { returnUrl: input.returnUrl }, [], pi);
}

/**
 * Runs the card, then writes the intent (inserted earlier in this transaction, or `before` when it
 * existed), the charge and the events. A decline answers 402 with Stripe's card_error, the intent
 * back in requires_payment_method with its `last_payment_error`.
 */
async function confirmAndStore(
  ctx: IntentContext,
  pi: PaymentIntent,
  opts: { returnUrl: string | null },
  events: NewEvent[],
  before: PaymentIntent = pi,
  /** Set for an intent not stored yet: it is inserted, created then. */
  created?: Date,
): Promise<Reply> {
  const paymentMethod = pi.payment_method as string;
  const card = TEST_CARDS.get(paymentMethod);
  if (!card) throw new Error(`unknown payment method ${paymentMethod} got past validation`);
  const outcome = card.outcome;
  if (outcome.kind === "succeeds" && outcome.delayed) await sleep(ctx.slowCardMs);
  const now = new Date();
  let next: PaymentIntent;
  let charge: Charge | null = null;
  let reply: Reply;
  if (outcome.kind === "requires_action") {
    next = {
      ...pi,
      status: "requires_action",
      last_payment_error: null,
      next_action: opts.returnUrl
        ? {
            type: "redirect_to_url",
            redirect_to_url: { url: `/v1/payment_intents/${pi.id}/authenticate`, return_url: opts.returnUrl },
          }
        : { type: "use_stripe_sdk", use_stripe_sdk: { type: "three_d_secure_redirect", stripe_js: null } },
    };
    events.push({
      type: "payment_intent.requires_action",
      object: next,
      previous: changedFrom(before, next),
    });
    reply = { status: 200, body: next };
  } else if (outcome.kind === "succeeds") {
    const manual = pi.capture_method === "manual";
    charge = newCharge(timeOrderedId("ch"), now, pi, paymentMethod, { captured: !manual });
    next = {
      ...pi,
      status: manual ? "requires_capture" : "succeeded",
      amount_capturable: manual ? pi.amount : 0,
      amount_received: manual ? 0 : pi.amount,
      latest_charge: charge.id,
      last_payment_error: null,
      next_action: null,
    };
    events.push(
      { type: "charge.succeeded", object: charge },
      manual
        ? {
            type: "payment_intent.amount_capturable_updated",
            object: next,
            previous: changedFrom(before, next),
          }
        : { type: "payment_intent.succeeded", object: next, previous: changedFrom(before, next) },
    );
    reply = { status: 200, body: next };
  } else {
    charge = newCharge(timeOrderedId("ch"), now, pi, paymentMethod, {
      failureCode: outcome.code,
      declineCode: outcome.declineCode,
      message: outcome.message,
    });
    const pm = paymentMethodObject(paymentMethod, unixSeconds(now));
    next = {
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
    events.push(
      { type: "charge.failed", object: charge },
      { type: "payment_intent.payment_failed", object: next, previous: changedFrom(before, next) },
    );
    reply = stripeError(402, "card_error", outcome.message, {
      code: outcome.code,
      decline_code: outcome.declineCode,
      charge: charge.id,
      payment_intent: next,
      payment_method: pm,
    });
  }
  await writeIntent(ctx.client, next, created);
  if (charge) await insertCharge(ctx.client, charge, now);
  await recordEvents(ctx.client, ctx.request, events, ctx.recorder);
  return reply;
}

/** Stores the intent as it now is: inserted when `created` is given (a new one), else updated. */
async function writeIntent(client: PoolClient, pi: PaymentIntent, created?: Date): Promise<void> {
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

async function insertCharge(client: PoolClient, charge: Charge, created: Date): Promise<void> {
  await client.query(
    `INSERT INTO ${SCHEMA}.charges (id, payment_intent, created, amount_captured, amount_refunded, object)
     VALUES ($1, $2, $3, $4, 0, $5)`,
    [charge.id, charge.payment_intent, created, charge.amount_captured, JSON.stringify(charge)],
  );
}

export async function captureIntent(
  ctx: IntentContext,
  id: string,
  input: ReturnType<typeof readCapture>,
): Promise<Reply> {
  const pi = await lockIntent(ctx.client, id);
  if (!pi) return notFound("payment_intent", id, "intent");
  if (pi.status !== "requires_capture") return unexpectedState(pi, "capture", ["requires_capture"]);
  const amount = input.amountToCapture ?? pi.amount_capturable;
  if (amount > pi.amount_capturable) {
    return stripeError(
      400,
      "invalid_request_error",
      `The amount to capture (${amount}) is greater than the amount capturable (${pi.amount_capturable}).`,
      { code: "amount_too_large", param: "amount_to_capture" },
    );
  }
  const found = await ctx.client.query<{ object: Charge }>(
    `SELECT object FROM ${SCHEMA}.charges WHERE id = $1 FOR UPDATE`,
    [pi.latest_charge],
  );
  const charge = found.rows[0]?.object;
  if (!charge) throw new Error(`payment intent ${pi.id} in requires_capture has no charge`);
  const captured: Charge = { ...charge, captured: true, amount_captured: amount };
  const next: PaymentIntent = {
    ...pi,
    status: "succeeded",
    amount_capturable: 0,
    amount_received: amount,
    metadata: input.metadata ? { ...pi.metadata, ...input.metadata } : pi.metadata,
  };
  await ctx.client.query(`UPDATE ${SCHEMA}.charges SET amount_captured = $2, object = $3 WHERE id = $1`, [
    charge.id,
    amount,
    JSON.stringify(captured),
  ]);
  await writeIntent(ctx.client, next);
  await recordEvents(
    ctx.client,
    ctx.request,
    [
      { type: "charge.captured", object: captured, previous: changedFrom(charge, captured) },
      { type: "payment_intent.succeeded", object: next, previous: changedFrom(pi, next) },
    ],
    ctx.recorder,
  );
  return { status: 200, body: next };
}

export async function cancelIntent(
  ctx: IntentContext,
  id: string,
  input: ReturnType<typeof readCancel>,
): Promise<Reply> {
  const pi = await lockIntent(ctx.client, id);
  if (!pi) return notFound("payment_intent", id, "intent");
  if (!CANCELABLE.includes(pi.status)) return unexpectedState(pi, "cancel", CANCELABLE);
  const next: PaymentIntent = {
    ...pi,
    status: "canceled",
    amount_capturable: 0,
    canceled_at: unixSeconds(new Date()),
    cancellation_reason: input.reason,
    next_action: null,
  };
  await writeIntent(ctx.client, next);
  await recordEvents(
    ctx.client,
    ctx.request,
    [{ type: "payment_intent.canceled", object: next, previous: changedFrom(pi, next) }],
    ctx.recorder,
  );
  return { status: 200, body: next };
}
