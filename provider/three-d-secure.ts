/**
 * 3-D Secure challenges, as Stripe's hooks.stripe.com pages (decision 0181). A PaymentIntent
 * confirmed with a return_url and a card that asks for authentication gets
 * `next_action.redirect_to_url.url`: a page of this process outside /v1, with no API key, whose
 * path carries an unguessable token (the only capability it needs). The customer completes or
 * fails it once; the intent moves and its events are recorded in one transaction with the
 * challenge's outcome; the browser is sent (303) to the return_url with `payment_intent`,
 * `payment_intent_client_secret` and `redirect_status` appended, as Stripe does. Anything after
 * that (a second press, a reload, a canceled or re-confirmed intent) changes nothing.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Pool, PoolClient } from "pg";
import { challengePage, messagePage } from "./challenge-page";
import { type EventRecorder, type EventRequest, recordEvents } from "./events";
import { type Reply, readForm } from "./http";
import { cardResult, insertCharge, lockIntent, writeIntent } from "./intent-store";
import { changedFrom, type PaymentIntent, unixSeconds } from "./objects";
import { inTransaction, SCHEMA, timeOrderedId } from "./pg";
import { paymentMethodObject, TEST_CARDS } from "./test-cards";

/** 24 random bytes, base64url: 32 characters. */
export const CHALLENGE_PATH = /^\/3d_secure\/([A-Za-z0-9_-]{32})$/;

export type RedirectStatus = "succeeded" | "failed";

export interface Challenge {
  token: string;
  returnUrl: string;
  nextAction: { type: "redirect_to_url"; redirect_to_url: { url: string; return_url: string } };
}

export function newChallenge(publicUrl: string, returnUrl: string): Challenge {
  const token = randomBytes(24).toString("base64url");
  return {
    token,
    returnUrl,
    nextAction: {
      type: "redirect_to_url",
      redirect_to_url: { url: `${publicUrl}/3d_secure/${token}`, return_url: returnUrl },
    },
  };
}

/** In the transaction that wrote the intent in requires_action (after it: the row refers to it). */
export async function storeChallenge(client: PoolClient, challenge: Challenge, paymentIntent: string) {
  await client.query(
    `INSERT INTO ${SCHEMA}.three_d_secure_challenges (token, payment_intent, return_url, created)
     VALUES ($1, $2, $3, clock_timestamp())`,
    [challenge.token, paymentIntent, challenge.returnUrl],
  );
}

export interface ChallengeContext {
  pool: Pool;
  authorizationTtlSeconds: number;
  merchant: string;
  request: EventRequest;
  recorder: EventRecorder;
}

interface ChallengeRow {
  token: string;
  payment_intent: string;
  return_url: string;
  outcome: RedirectStatus | null;
}

const AUTHENTICATION_FAILED =
  "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.";

/** A request for a challenge page: GET shows it, POST `action=complete|fail` answers it. */
export async function challengeRequest(
  ctx: ChallengeContext,
  req: IncomingMessage,
  token: string,
): Promise<{ reply: Reply; changed: boolean }> {
  if (req.method === "GET") return { reply: await showChallenge(ctx, token), changed: false };
  if (req.method !== "POST") {
    const reply = html(405, messagePage("Method not allowed", "GET or POST only."), { allow: "GET, POST" });
    return { reply, changed: false };
  }
  const body = await readForm(req);
  const action = body.ok ? body.form.action : undefined;
  if (action !== "complete" && action !== "fail") {
    const reply = html(400, messagePage("Bad request", 'The form sends action "complete" or "fail".'));
    return { reply, changed: false };
  }
  return answerChallenge(ctx, token, action);
}

/** GET: the page, open or over. */
export async function showChallenge(ctx: ChallengeContext, token: string): Promise<Reply> {
  const found = await ctx.pool.query<ChallengeRow & { pi: PaymentIntent }>(
    `SELECT c.token, c.payment_intent, c.return_url, c.outcome, p.object AS pi
       FROM ${SCHEMA}.three_d_secure_challenges c
       JOIN ${SCHEMA}.payment_intents p ON p.id = c.payment_intent
      WHERE c.token = $1`,
    [token],
  );
  const row = found.rows[0];
  return row ? viewOf(ctx, row, row.pi) : unknownChallenge();
}

/** POST `action=complete|fail`: once per challenge; then the way back to the merchant. */
export async function answerChallenge(
  ctx: ChallengeContext,
  token: string,
  action: "complete" | "fail",
): Promise<{ reply: Reply; changed: boolean }> {
  return inTransaction(ctx.pool, async (client) => {
    // The challenge's row, then its intent (as confirm and cancel lock it): two presses queue here.
    const found = await client.query<ChallengeRow>(
      `SELECT token, payment_intent, return_url, outcome
         FROM ${SCHEMA}.three_d_secure_challenges WHERE token = $1 FOR UPDATE`,
      [token],
    );
    const row = found.rows[0];
    if (!row) return { reply: unknownChallenge(), changed: false };
    const pi = await lockIntent(client, row.payment_intent);
    if (!pi) throw new Error(`challenge ${token} refers to no payment intent`);
    if (!isOpen(row, pi)) return { reply: viewOf(ctx, row, pi), changed: false };

    const now = new Date();
    const paymentMethod = pi.payment_method as string;
    const card = TEST_CARDS.get(paymentMethod)?.outcome;
    const result =
      action === "fail" || card?.kind !== "requires_action"
        ? authenticationFailed(pi, paymentMethod, now)
        : cardResult(pi, pi, paymentMethod, card.then, now, timeOrderedId("ch"), ctx.authorizationTtlSeconds);
    const status: RedirectStatus = result.next.status === "requires_payment_method" ? "failed" : "succeeded";
    await writeIntent(client, result.next);
    if (result.charge) await insertCharge(client, result.charge, now);
    await client.query(
      `UPDATE ${SCHEMA}.three_d_secure_challenges SET outcome = $2, resolved_at = $3 WHERE token = $1`,
      [token, status, now],
    );
    await recordEvents(client, ctx.request, result.events, ctx.recorder);
    const location = returnLink(row.return_url, result.next, status);
    return { reply: { status: 303, body: null, headers: { location }, html: "" }, changed: true };
  });
}

/** Stripe's failed authentication: no charge, the card detached, the intent open to another one. */
function authenticationFailed(pi: PaymentIntent, paymentMethod: string, now: Date) {
  const next: PaymentIntent = {
    ...pi,
    status: "requires_payment_method",
    payment_method: null,
    next_action: null,
    last_payment_error: {
      type: "invalid_request_error",
      code: "payment_intent_authentication_failure",
      message: AUTHENTICATION_FAILED,
      doc_url: "https://stripe.com/docs/error-codes/payment-intent-authentication-failure",
      payment_method: paymentMethodObject(paymentMethod, unixSeconds(now)),
    },
  };
  return {
    next,
    charge: null,
    events: [{ type: "payment_intent.payment_failed", object: next, previous: changedFrom(pi, next) }],
  };
}

/** Open while unanswered and still the intent's current challenge (a re-confirm issues another). */
function isOpen(row: ChallengeRow, pi: PaymentIntent): boolean {
  const redirect = pi.next_action?.redirect_to_url as { url?: unknown } | undefined;
  return (
    row.outcome === null &&
    pi.status === "requires_action" &&
    typeof redirect?.url === "string" &&
    redirect.url.endsWith(`/3d_secure/${row.token}`)
  );
}

function viewOf(ctx: ChallengeContext, row: ChallengeRow, pi: PaymentIntent): Reply {
  const open = isOpen(row, pi);
  const status: RedirectStatus = row.outcome ?? "failed";
  const reason =
    row.outcome === "succeeded"
      ? "This authentication is over: it was completed."
      : row.outcome === "failed"
        ? "This authentication is over: it failed or the card was declined."
        : pi.status === "canceled"
          ? "This authentication is over: the payment was canceled."
          : "This authentication is over: the payment no longer waits for it.";
  return html(
    200,
    challengePage({
      merchant: ctx.merchant,
      amount: pi.amount,
      currency: pi.currency,
      state: open
        ? { open: true }
        : { open: false, reason, returnLink: returnLink(row.return_url, pi, status) },
    }),
  );
}

/** The return_url with what Stripe appends on the way back. */
export function returnLink(returnUrl: string, pi: PaymentIntent, status: RedirectStatus): string {
  const url = new URL(returnUrl);
  url.searchParams.append("payment_intent", pi.id);
  url.searchParams.append("payment_intent_client_secret", pi.client_secret);
  url.searchParams.append("redirect_status", status);
  return url.toString();
}

function unknownChallenge(): Reply {
  return html(
    404,
    messagePage("Authentication not found", "There is no 3D Secure authentication at this address."),
  );
}

export function html(status: number, page: string, headers: Record<string, string> = {}): Reply {
  return { status, body: null, html: page, headers };
}
