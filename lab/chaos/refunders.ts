import { callApp, problemReason } from "./app-client";
import type { Deployment } from "./deployment";
import type { Journal, RefundAnswer, RefundMode } from "./journal";
import type { Random } from "./random";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PER_KEY_DEADLINE_MS = 45_000;

interface Refundable {
  paymentId: string;
  amount: number;
}

/** The succeeded payments shoppers (or a capture) were told about, with what was taken: what operators refund. */
function refundable(journal: Journal): Refundable[] {
  const seen = new Map<string, Refundable>();
  for (const a of journal.answers) {
    if (a.status === 200 && a.paymentStatus === "succeeded" && a.paymentId && a.amount !== null)
      seen.set(a.paymentId, { paymentId: a.paymentId, amount: a.amount });
  }
  // A manual payment once an operator's capture answered 200: what was captured is refundable.
  for (const a of journal.authorizationAnswers) {
    if (a.action === "capture" && a.status === 200 && a.amountCaptured !== null)
      seen.set(a.paymentId, { paymentId: a.paymentId, amount: a.amountCaptured });
  }
  return [...seen.values()];
}

/**
 * One Refund press through the REST API: one key, retried with that key (honouring Retry-After)
 * until an answer that is final: a 200, or a 4xx other than 409 and other than the 422 that comes
 * with Retry-After (beyond what is left while another refund is pending, not stored).
 */
async function refundOnce(
  deployment: Deployment,
  random: Random,
  journal: Journal,
  target: Refundable,
  amountMinor: number,
  mode: RefundMode,
  key = random.uuid(),
): Promise<RefundAnswer | null> {
  const deadline = Date.now() + PER_KEY_DEADLINE_MS;
  let last: RefundAnswer | null = null;
  for (;;) {
    const sentAt = Date.now();
    const answer = await callApp(deployment, random, "/api/v1/refunds", {
      method: "POST",
      headers: { authorization: `Bearer ${deployment.adminToken}`, "idempotency-key": key },
      body: { paymentId: target.paymentId, amountMinor, reason: `chaos ${mode}` },
    });
    const ok = answer.status === 200;
    const retryAfter = answer.headers.get("retry-after");
    last = {
      key,
      paymentId: target.paymentId,
      amountMinor,
      mode,
      sentAt,
      answeredAt: Date.now(),
      status: answer.status,
      retryAfter,
      reason: ok ? String(answer.body?.status ?? "") : problemReason(answer.body),
      refundId: ok && typeof answer.body?.id === "string" ? answer.body.id : null,
    };
    journal.refundAnswers.push(last);
    const status = answer.status;
    const final = status !== null && status < 500 && status !== 409 && status !== 429 && retryAfter === null;
    if (ok || final) return last;
    const waitMs =
      Number.isFinite(Number(retryAfter)) && retryAfter !== null ? Number(retryAfter) * 1000 : 500;
    if (Date.now() + waitMs > deadline) return last;
    await sleep(waitMs);
  }
}

/**
 * Operators refunding succeeded payments at random until the attack ends: part of one, all of
 * one, two or three at once on one payment with keys of their own (their sum past the capture),
 * or one request sent again later with the same key, as a retrying client would.
 */
export async function refundLoop(deployment: Deployment, random: Random, journal: Journal, until: number) {
  while (Date.now() < until) {
    await sleep(random.int(1500, 4000));
    const candidates = refundable(journal);
    if (candidates.length === 0) continue;
    const target = random.pick(candidates);
    const roll = random.int(1, 100);
    if (roll <= 40) {
      await refundOnce(
        deployment,
        random,
        journal,
        target,
        random.int(1, Math.max(1, Math.floor(target.amount / 2))),
        "partial",
      );
    } else if (roll <= 60) {
      await refundOnce(deployment, random, journal, target, target.amount, "full");
    } else if (roll <= 85) {
      const share = Math.max(1, Math.ceil(target.amount * 0.6));
      await Promise.all(
        Array.from({ length: random.int(2, 3) }, () =>
          refundOnce(deployment, random, journal, target, share, "concurrent"),
        ),
      );
    } else {
      const key = random.uuid();
      const amount = random.int(1, Math.max(1, Math.floor(target.amount / 3)));
      const first = refundOnce(deployment, random, journal, target, amount, "retry", key);
      await sleep(random.int(0, 1500));
      await Promise.all([first, refundOnce(deployment, random, journal, target, amount, "retry", key)]);
    }
  }
}
