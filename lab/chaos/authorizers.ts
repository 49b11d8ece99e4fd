import { callApp, problemReason } from "./app-client";
import type { Deployment } from "./deployment";
import type { AuthorizationAnswer, AuthorizationMode, Journal } from "./journal";
import type { Random } from "./random";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PER_KEY_DEADLINE_MS = 45_000;
/** The share of authorizations operators leave alone, so the expiry cancels them. */
const LEFT_TO_EXPIRE = 0.25;

interface Authorized {
  paymentId: string;
  amount: number;
  captureBefore: number;
}

/** The authorized payments shoppers were told about (a manual capture's 200), once each. */
function authorizedSoFar(journal: Journal): Authorized[] {
  const seen = new Map<string, Authorized>();
  for (const a of journal.answers) {
    if (a.status !== 200 || a.paymentStatus !== "authorized" || !a.paymentId || a.amount === null) continue;
    const captureBefore = Date.parse(a.captureBefore ?? "");
    if (Number.isFinite(captureBefore))
      seen.set(a.paymentId, { paymentId: a.paymentId, amount: a.amount, captureBefore });
  }
  return [...seen.values()];
}

/**
 * One Capture or Cancel press: one key, retried with that key (honouring Retry-After) until a final
 * answer: a 200, or a 4xx without Retry-After (payment-not-capturable once the winner is final).
 */
export async function actOnce(
  deployment: Deployment,
  random: Random,
  journal: Journal,
  target: Authorized,
  action: "capture" | "cancel",
  mode: AuthorizationMode,
  opts: { amountMinor?: number; key?: string } = {},
): Promise<AuthorizationAnswer> {
  const key = opts.key ?? random.uuid();
  const deadline = Date.now() + PER_KEY_DEADLINE_MS;
  for (;;) {
    const sentAt = Date.now();
    const answer = await callApp(deployment, random, `/api/v1/payments/${target.paymentId}/${action}`, {
      method: "POST",
      headers: { authorization: `Bearer ${deployment.adminToken}`, "idempotency-key": key },
      body: opts.amountMinor === undefined ? {} : { amountMinor: opts.amountMinor },
    });
    const ok = answer.status === 200;
    const retryAfter = answer.headers.get("retry-after");
    const body = answer.body;
    const last: AuthorizationAnswer = {
      action,
      key,
      paymentId: target.paymentId,
      amountMinor: opts.amountMinor ?? null,
      mode,
      sentAt,
      answeredAt: Date.now(),
      status: answer.status,
      retryAfter,
      reason: ok ? String(body?.status ?? "") : problemReason(body),
      state: !ok && typeof body?.state === "string" ? body.state : null,
      amountCaptured: ok && typeof body?.amountCaptured === "number" ? body.amountCaptured : null,
    };
    journal.authorizationAnswers.push(last);
    const status = answer.status;
    const final = status !== null && status < 500 && status !== 429 && retryAfter === null;
    if (ok || final) return last;
    const waitMs =
      retryAfter !== null && Number.isFinite(Number(retryAfter)) ? Number(retryAfter) * 1000 : 500;
    if (Date.now() + waitMs > deadline) return last;
    await sleep(waitMs);
  }
}

const partOf = (random: Random, amount: number) => random.int(1, Math.max(1, amount - 1));

/**
 * Operators at the admin's Authorizations list until the attack ends: capture all or part of a
 * hold, cancel it, press again later with the same key, race another operator (two keys at once:
 * capture against cancel, or two captures), or act right at the deadline, racing the expiry. A
 * share of the holds is left alone for the expiry.
 */
export async function authorizationLoop(
  deployment: Deployment,
  random: Random,
  journal: Journal,
  until: number,
): Promise<void> {
  const decided = new Set<string>();
  const atDeadline: Promise<unknown>[] = [];
  while (Date.now() < until) {
    await sleep(random.int(800, 2500));
    const fresh = authorizedSoFar(journal).filter((a) => !decided.has(a.paymentId));
    if (fresh.length === 0) continue;
    const target = random.pick(fresh);
    decided.add(target.paymentId);
    if (random.chance(LEFT_TO_EXPIRE)) continue;
    const roll = random.int(1, 100);
    if (roll <= 20) {
      await actOnce(deployment, random, journal, target, "capture", "capture_full");
    } else if (roll <= 36) {
      const amountMinor = partOf(random, target.amount);
      await actOnce(deployment, random, journal, target, "capture", "capture_partial", { amountMinor });
    } else if (roll <= 48) {
      await actOnce(deployment, random, journal, target, "cancel", "cancel");
    } else if (roll <= 60) {
      // A retrying client: the same key again, concurrently or a little later.
      const key = random.uuid();
      const action = random.chance(0.7) ? "capture" : "cancel";
      const amountMinor =
        action === "capture" && random.chance(0.5) ? partOf(random, target.amount) : undefined;
      const first = actOnce(deployment, random, journal, target, action, "retry", { key, amountMinor });
      await sleep(random.int(0, 1500));
      await Promise.all([
        first,
        actOnce(deployment, random, journal, target, action, "retry", { key, amountMinor }),
      ]);
    } else if (roll <= 80) {
      // Two operators at once, each with a key of their own: exactly one may win.
      const other = random.chance(0.5) ? "cancel" : "capture";
      await Promise.all([
        actOnce(deployment, random, journal, target, "capture", "race", {
          amountMinor: random.chance(0.5) ? partOf(random, target.amount) : undefined,
        }),
        actOnce(deployment, random, journal, target, other, "race", {
          amountMinor: other === "capture" ? partOf(random, target.amount) : undefined,
        }),
      ]);
    } else {
      // Right at the deadline, racing the expiry (in the background: the operator moves on).
      const fork = random.fork(`deadline-${target.paymentId}`);
      const when = target.captureBefore + fork.int(-2500, 3500);
      atDeadline.push(
        (async () => {
          await sleep(Math.max(0, when - Date.now()));
          const action = fork.chance(0.7) ? "capture" : "cancel";
          await actOnce(deployment, fork, journal, target, action, "at_deadline");
        })(),
      );
    }
  }
  await Promise.all(atDeadline);
}
