import { DEMO_CATALOG, DEMO_CURRENCY } from "../../server/seed";
import { type Answer, callApp, problemReason } from "./app-client";
import type { Deployment, ShopperAccount } from "./deployment";
import type { Journal, KeyOutcome, PaymentAnswer } from "./journal";
import type { Random } from "./random";

export const CARDS = [
  "pm_card_visa",
  "pm_card_declined",
  "pm_card_slow",
  "pm_card_authenticationRequired",
] as const;
export type Card = (typeof CARDS)[number];

/** How a shopper treats an answer that says "not now" (429, 503, 500, no answer). */
export interface Temper {
  /** Chance of leaving at each such answer instead of retrying. */
  leaveChance: number;
  /** The longest Retry-After the shopper waits for; a longer one makes them leave. */
  maxWaitSeconds: number;
}
export const PATIENT: Temper = { leaveChance: 0.1, maxWaitSeconds: 20 };
export const IMPATIENT: Temper = { leaveChance: 1, maxWaitSeconds: 0 };

export interface ShopContext {
  deployment: Deployment;
  journal: Journal;
  /** Stop starting new work after this time. */
  until: number;
}

const PER_KEY_DEADLINE_MS = 45_000;
/** The share of the crowd's payments made with `captureMethod: "manual"`. */
export const MANUAL_SHARE = 0.35;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The products a shopper picks from: one currency's, since an order is in one currency. */
const SHELF = DEMO_CATALOG.filter((p) => p.currency === DEMO_CURRENCY);

/** A new order of one to three catalogue lines; null when the app would not take it. */
export async function placeOrder(
  ctx: ShopContext,
  random: Random,
  account: ShopperAccount,
): Promise<string | null> {
  const items = Array.from({ length: random.int(1, 3) }, () => ({
    sku: random.pick(SHELF).sku,
    quantity: random.int(1, 3),
  }));
  const unique = [...new Map(items.map((i) => [i.sku, i])).values()];
  for (let attempt = 0; attempt < 8; attempt++) {
    const answer = await callApp(ctx.deployment, random, "/api/v1/orders", {
      method: "POST",
      headers: { authorization: `Bearer ${account.token}` },
      body: { items: unique },
    });
    if (answer.status === 200 || answer.status === 201) {
      ctx.journal.orders++;
      return String(answer.body?.id);
    }
    await sleep(500);
  }
  return null;
}

export interface PayOptions {
  card: Card;
  copies: number;
  temper: Temper;
  key?: string;
  /** "manual": authorize only (the payment answers `authorized`); absent: the merchant's setting. */
  captureMethod?: "automatic" | "manual";
  /** Where the provider sends the shopper back after a 3-D Secure step. */
  returnUrl?: string;
}

/**
 * One Pay press: `copies` concurrent requests with one key (a double click, a retrying proxy),
 * each retrying with the same key, honouring Retry-After, until an answer it takes as final
 * or its temper makes it leave.
 */
export async function payOrder(
  ctx: ShopContext,
  random: Random,
  account: ShopperAccount,
  orderId: string,
  opts: PayOptions,
): Promise<KeyOutcome> {
  const key = opts.key ?? random.uuid();
  const deadline = Date.now() + PER_KEY_DEADLINE_MS;
  const copies = Array.from({ length: opts.copies }, (_, copy) =>
    payCopy(ctx, random.fork(`${key}:${copy}`), account, orderId, key, copy, opts, deadline),
  );
  const ends = await Promise.all(copies);
  const answers = ends.flatMap((e) => e.answers);
  const success = answers.find((a) => a.status === 200 || a.status === 201);
  const last = [...ends].sort((a, b) => (a.last?.answeredAt ?? 0) - (b.last?.answeredAt ?? 0)).at(-1);
  const outcome: KeyOutcome = {
    accountId: account.id,
    key,
    orderId,
    last: success ?? last?.last ?? null,
    gaveUp: success ? "success" : (last?.why ?? "deadline"),
  };
  ctx.journal.keys.push(outcome);
  return outcome;
}

async function payCopy(
  ctx: ShopContext,
  random: Random,
  account: ShopperAccount,
  orderId: string,
  key: string,
  copy: number,
  opts: PayOptions,
  deadline: number,
): Promise<{ answers: PaymentAnswer[]; last: PaymentAnswer | null; why: KeyOutcome["gaveUp"] }> {
  const answers: PaymentAnswer[] = [];
  // Copies of one press leave within a few milliseconds of each other.
  await sleep(random.int(0, 30));
  for (;;) {
    const sentAt = Date.now();
    const answer = await callApp(ctx.deployment, random, "/api/v1/payments", {
      method: "POST",
      headers: { authorization: `Bearer ${account.token}`, "idempotency-key": key },
      body: {
        orderId,
        paymentMethod: opts.card,
        ...(opts.captureMethod && { captureMethod: opts.captureMethod }),
        ...(opts.returnUrl && { returnUrl: opts.returnUrl }),
      },
    });
    const record = toRecord(account, key, orderId, copy, sentAt, answer);
    answers.push(record);
    ctx.journal.answers.push(record);
    const next = nextStep(answer, opts.temper, random);
    if (next.stop) return { answers, last: record, why: next.why };
    if (Date.now() + next.waitMs > deadline) return { answers, last: record, why: "deadline" };
    await sleep(next.waitMs);
  }
}

type Step = { stop: true; why: KeyOutcome["gaveUp"] } | { stop: false; waitMs: number };

function nextStep(answer: Answer, temper: Temper, random: Random): Step {
  const status = answer.status;
  if (status === 200 || status === 201) return { stop: true, why: "success" };
  const retryAfter = Number(answer.headers.get("retry-after") ?? Number.NaN);
  if (status === 409) {
    // In flight (ours or the order's other payment): told to come back. Already paid: final.
    if (!Number.isFinite(retryAfter)) return { stop: true, why: "final_answer" };
    if (temper.leaveChance >= 1) return { stop: true, why: "impatient" };
    return { stop: false, waitMs: retryAfter * 1000 };
  }
  if (status !== null && status < 500 && status !== 429) return { stop: true, why: "final_answer" };
  // 429, 5xx or no answer: "not now". A shopper may leave here.
  if (random.chance(temper.leaveChance)) return { stop: true, why: "impatient" };
  const wait = Number.isFinite(retryAfter) ? retryAfter : 1;
  if (wait > temper.maxWaitSeconds && status === 429) return { stop: true, why: "impatient" };
  return { stop: false, waitMs: Math.max(wait * 1000, status === null ? 300 : 0) };
}

function toRecord(
  account: ShopperAccount,
  key: string,
  orderId: string,
  copy: number,
  sentAt: number,
  answer: Answer,
): PaymentAnswer {
  const body = answer.body;
  const ok = answer.status === 200 || answer.status === 201;
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    accountId: account.id,
    key,
    orderId,
    copy,
    instance: answer.instance,
    sentAt,
    answeredAt: Date.now(),
    status: answer.status,
    retryAfter: answer.headers.get("retry-after"),
    reason: ok ? str(body?.status) : problemReason(body),
    paymentId: ok ? str(body?.id) : str(body?.paymentId),
    providerChargeId: ok ? str(body?.providerChargeId) : null,
    paymentStatus: ok ? str(body?.status) : str(body?.paymentStatus),
    amount: ok && typeof body?.amount === "number" ? body.amount : null,
    captureBefore: ok ? str(body?.captureBefore) : null,
    nextActionUrl: ok ? str((body?.nextAction as { url?: unknown } | null)?.url) : null,
  };
}

/** A shopper who keeps ordering and paying until the attack ends. */
export async function shopAround(ctx: ShopContext, random: Random, account: ShopperAccount): Promise<void> {
  while (Date.now() < ctx.until) {
    const orderId = await placeOrder(ctx, random, account);
    if (!orderId) continue;
    const roll = random.int(1, 100);
    const card: Card = roll <= 70 ? "pm_card_visa" : roll <= 85 ? "pm_card_declined" : "pm_card_slow";
    const temper = random.chance(0.7) ? PATIENT : IMPATIENT;
    // A share of the orders ship later: authorized now, captured (or canceled) by an operator.
    const captureMethod = random.chance(MANUAL_SHARE) ? "manual" : undefined;
    const first = payOrder(ctx, random, account, orderId, {
      card,
      copies: random.int(1, 3),
      temper,
      captureMethod,
    });
    // Now and then a second tab pays the same order with a key of its own.
    if (random.chance(0.08)) {
      await sleep(random.int(0, 800));
      await payOrder(ctx, random, account, orderId, { card: "pm_card_visa", copies: 1, temper: PATIENT });
    }
    await first;
    await sleep(random.int(1500, 5000));
  }
}
