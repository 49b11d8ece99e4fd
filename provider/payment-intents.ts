/**
 * PaymentIntents: create (and confirm in the same request), confirm, capture, cancel, retrieve,
 * list and search, with the state machine Stripe documents for card payments:
 *
 *   requires_payment_method ─(payment_method)→ requires_confirmation ─confirm→
 *     succeeded                      (capture_method automatic / automatic_async)
 *     requires_capture ─capture→ succeeded   (capture_method manual)
 *     requires_action ─challenge (three-d-secure.ts)→ succeeded / requires_capture,
 *                     or requires_payment_method (authentication failed, or the card declined)
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
import { cancelAndStore, cardResult, insertCharge, lockIntent, writeIntent } from "./intent-store";
import {
  type CaptureMethod,
  type Charge,
  changedFrom,
  type IntentStatus,
  newPaymentIntent,
  type PaymentIntent,
} from "./objects";
import { ParamError, type Params } from "./params";
import { SCHEMA, timeOrderedId } from "./pg";
import { TEST_CARDS } from "./test-cards";
import { newChallenge, storeChallenge } from "./three-d-secure";

export interface IntentContext {
  client: PoolClient;
  /** The simulator's origin as the customer's browser reaches it: challenge pages live there. */
  publicUrl: string;
  request: EventRequest;
  recorder: EventRecorder;
  /** How long `pm_card_slow` takes. */
  slowCardMs: number;
  /** An authorization's capture_before, from its charge's creation (Stripe: 7 days). */
  authorizationTtlSeconds: number;
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

/** Where the customer comes back after 3-D Secure: an absolute URL (an app's own scheme too). */
function returnUrlOf(params: Params): string | undefined {
  const url = params.string("return_url", { max: 2048 });
  if (url !== undefined && !URL.canParse(url))
    throw new ParamError(`Not a valid URL: ${url}`, "return_url", "url_invalid");
  return url;
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
    returnUrl: returnUrlOf(params) ?? null,
    description: params.string("description", { max: 1000 }) ?? null,
  };
  const types = params.strings("allowed_payment_method_types");
  if (types?.some((t) => t !== "card"))
    throw new ParamError(
      "The simulator takes card payments only.",
      "allowed_payment_method_types",
      "parameter_invalid",
    );
  // Cards redirect only for 3-D Secure, so both settings of allow_redirects confirm without a
  // return_url here; a return_url beside "never" is refused (the brief for issue 40 holds Stripe
  // refuses it; decision 0181).
  const automatic = params.hash("automatic_payment_methods")?.only("enabled", "allow_redirects");
  automatic?.boolean("enabled");
  const redirects = automatic?.oneOf("allow_redirects", ["always", "never"] as const);
  if (redirects === "never" && input.returnUrl !== null)
    throw new ParamError(
      "You cannot pass a return_url when automatic_payment_methods[allow_redirects] is never: no payment method of this PaymentIntent may redirect.",
      "return_url",
      "parameter_invalid",
    );
  // What Stripe takes in the currency: one it lists, its minimum, maximum and steps (decision 0175).
  const problem = amountProblem(input.amount, input.currency, "charge");
  if (problem?.code === "currency_unknown")
    throw new ParamError(
      `Invalid currency: ${input.currency}. Stripe currently supports these currencies: see docs.stripe.com/currencies.`,
      "currency",
      "parameter_invalid",
    );
  if (problem) throw new ParamError(problem.message, "amount", problem.code);
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
    returnUrl: returnUrlOf(params) ?? null,
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
 * Runs the card, then writes the intent (inserted now when `created` is given, else updated from
 * `before`), the charge, any 3-D Secure challenge and the events. A card that asks for 3-D Secure
 * stops at requires_action: with a return_url, a challenge page to redirect to (three-d-secure.ts);
 * without, Stripe.js's own flow (use_stripe_sdk), which nothing here completes.
 */
async function confirmAndStore(
  ctx: IntentContext,
  pi: PaymentIntent,
  opts: { returnUrl: string | null },
  events: NewEvent[],
  before: PaymentIntent = pi,
  created?: Date,
): Promise<Reply> {
  const paymentMethod = pi.payment_method as string;
  const card = TEST_CARDS.get(paymentMethod);
  if (!card) throw new Error(`unknown payment method ${paymentMethod} got past validation`);
  const outcome = card.outcome;
  if (outcome.kind === "succeeds" && outcome.delayed) await sleep(ctx.slowCardMs);
  if (outcome.kind === "requires_action") {
    const challenge = opts.returnUrl ? newChallenge(ctx.publicUrl, opts.returnUrl) : null;
    const next: PaymentIntent = {
      ...pi,
      status: "requires_action",
      last_payment_error: null,
      next_action: challenge?.nextAction ?? {
        type: "use_stripe_sdk",
        use_stripe_sdk: { type: "three_d_secure_redirect", stripe_js: null },
      },
    };
    events.push({
      type: "payment_intent.requires_action",
      object: next,
      previous: changedFrom(before, next),
    });
    await writeIntent(ctx.client, next, created);
    if (challenge) await storeChallenge(ctx.client, challenge, next.id);
    await recordEvents(ctx.client, ctx.request, events, ctx.recorder);
    return { status: 200, body: next };
  }
  const now = new Date();
  const result = cardResult(
    pi,
    before,
    paymentMethod,
    outcome,
    now,
    timeOrderedId("ch"),
    ctx.authorizationTtlSeconds,
  );
  await writeIntent(ctx.client, result.next, created);
  if (result.charge) await insertCharge(ctx.client, result.charge, now);
  await recordEvents(ctx.client, ctx.request, [...events, ...result.events], ctx.recorder);
  return result.reply;
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
  const next = await cancelAndStore(ctx.client, pi, input.reason, ctx.request, ctx.recorder);
  return { status: 200, body: next };
}
