import type { ShopperAccount } from "./deployment";
import type { ChallengeBehaviour, ChallengeStep, KeyOutcome } from "./journal";
import type { Random } from "./random";
import { PATIENT, type PayOptions, payOrder, placeOrder, type ShopContext } from "./shoppers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CHALLENGE_TIMEOUT_MS = 15_000;

/** What the shopper's last answer for a key says: the payment's status, or the problem. */
const said = (k: KeyOutcome) =>
  k.last?.status === 200 || k.last?.status === 201
    ? (k.last.paymentStatus ?? "200")
    : `${k.last?.status ?? "no answer"} ${k.last?.reason ?? ""}`.trim();

/**
 * The shopper at the provider's challenge page: presses complete or fail (form POST, answered 303
 * to the return URL once; a second press changes nothing). Not through the fault proxy: the
 * shopper's browser reaches the provider's page directly.
 */
async function press(step: ChallengeStep, url: string, action: "complete" | "fail") {
  let status: number | null = null;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ action }).toString(),
      redirect: "manual",
      signal: AbortSignal.timeout(CHALLENGE_TIMEOUT_MS),
    });
    status = res.status;
    await res.arrayBuffer();
  } catch {
    status = null;
  }
  step.pressed.push({ action, status, at: Date.now() });
}

/**
 * One 3-D Secure payment (`pm_card_authenticationRequired`, automatic or manual capture): the Pay
 * press answers `requires_action` with the challenge page; the shopper then completes it, fails
 * it, abandons it (never comes back: the action timeout cancels it), reloads (retries the same key
 * before finishing, then completes), or completes it late (around the action timeout, racing the
 * cancel); after the step the checkout retries the same key until a final answer.
 */
export async function payWithChallenge(
  ctx: ShopContext & { returnBase: string; actionTimeoutSeconds: number },
  random: Random,
  account: ShopperAccount,
  orderId: string,
): Promise<ChallengeStep> {
  const behaviour = random.pick<ChallengeBehaviour>([
    "complete",
    "complete",
    "fail",
    "abandon",
    "reload",
    "reload",
    "late",
  ]);
  const opts: PayOptions = {
    card: "pm_card_authenticationRequired",
    copies: random.int(1, 2),
    temper: PATIENT,
    key: random.uuid(),
    captureMethod: random.chance(0.35) ? "manual" : "automatic",
    returnUrl: `${ctx.returnBase}/orders/${orderId}`,
  };
  const step: ChallengeStep = {
    accountId: account.id,
    key: opts.key as string,
    orderId,
    paymentId: null,
    behaviour,
    captureMethod: opts.captureMethod ?? "automatic",
    url: null,
    pressed: [],
    actionTimeoutSeconds: ctx.actionTimeoutSeconds,
    finalAnswer: null,
    reissued: false,
  };
  ctx.journal.challenges.push(step);
  const first = await payOrder(ctx, random, account, orderId, opts);
  step.paymentId = first.last?.paymentId ?? null;
  let url = first.last?.paymentStatus === "requires_action" ? (first.last.nextActionUrl ?? null) : null;
  step.finalAnswer = said(first);
  if (!url) return step;
  step.url = url;
  if (behaviour === "abandon") return step;
  await sleep(random.int(300, 3000));
  if (behaviour === "reload") {
    // The order page reloaded (or a second tab) mid-challenge: the same key asks again.
    const again = await payOrder(ctx, random, account, orderId, { ...opts, copies: random.int(1, 2) });
    step.finalAnswer = said(again);
    // The reloaded page sends the shopper to the step it now names (the same one, unless reissued).
    const now = again.last?.paymentStatus === "requires_action" ? again.last.nextActionUrl : null;
    if (now && now !== url) {
      step.reissued = true;
      url = now;
      step.url = now;
    }
    await sleep(random.int(200, 2000));
  }
  if (behaviour === "late") {
    const lateBy = random.int(-3000, 3000);
    await sleep(Math.max(0, ctx.actionTimeoutSeconds * 1000 + lateBy - 3000));
  }
  const action = behaviour === "fail" ? "fail" : "complete";
  // Now and then a double press on the challenge's button.
  const presses = random.chance(0.2) ? 2 : 1;
  const at = url;
  await Promise.all(Array.from({ length: presses }, () => press(step, at, action)));
  await sleep(random.int(0, 1500));
  const back = await payOrder(ctx, random, account, orderId, { ...opts, copies: random.int(1, 2) });
  step.paymentId = step.paymentId ?? back.last?.paymentId ?? null;
  step.finalAnswer = said(back);
  return step;
}

/** A shopper whose card asks for 3-D Secure each time, until the attack ends. */
export async function challengeLoop(
  ctx: ShopContext & { returnBase: string; actionTimeoutSeconds: number },
  random: Random,
  account: ShopperAccount,
): Promise<void> {
  while (Date.now() < ctx.until) {
    const orderId = await placeOrder(ctx, random, account);
    if (!orderId) continue;
    await payWithChallenge(ctx, random, account, orderId);
    await sleep(random.int(2000, 6000));
  }
}
