import { getTRPCErrorFromUnknown } from "@trpc/server";
import type { Db } from "../db";
import { env } from "../env";
import { errorDetailsOf } from "../errors";
import {
  type AbandonedCandidate,
  abandonedKeyStats,
  DEFAULT_BACKOFF,
  findAbandonedKeys,
  findUnfinishedKey,
  isLeaseLost,
  type RecoveryBackoff,
  recordKeyEvent,
  runAsOwner,
  takeOverAbandoned,
} from "../keys";
import { errorField, logger } from "../log";
import { executePayment, type PaymentDeps, type PaymentRequest, RECOVERY } from "./phases";

export const PAYMENT_PROCEDURE = "payments.create";

export interface CompleterOptions {
  backoff?: RecoveryBackoff;
  /**
   * A payment for which no charge request ever left is charged by the completer until this long
   * after its creation (the database's clock); after it, it is failed instead (nothing charged,
   * proven by the durable mark every request commits first; the order is free to pay again).
   * A payment whose request may be out is never abandoned: it is re-sent with the same key.
   */
  abandonAfterSeconds?: number;
  limit?: number;
}

export const DEFAULT_ABANDON_AFTER_SECONDS = 3600;

/** The completer's schedule from the environment, shared by its loop and the admin's re-drive. */
export function completerOptions(): CompleterOptions {
  return {
    backoff: { idleSeconds: DEFAULT_BACKOFF.idleSeconds, maxSeconds: env.COMPLETER_MAX_BACKOFF_SECONDS },
    abandonAfterSeconds: env.PAYMENT_ABANDON_AFTER_SECONDS,
  };
}

type Outcome = "settled" | "failed" | "busy";

/**
 * Finds payments whose attempt died after phase 1 (the client may never come back) and drives
 * each to completion through the same phases as a request, so a charge the provider made is
 * always booked. It never gives up: a key that keeps failing is tried again on a capped backoff
 * of its own, and shows as needs_attention for an operator. Each key is taken over just before it
 * is driven, and one key's failure never stops the others. Returns how many keys it settled.
 */
export async function completeAbandonedPayments(deps: PaymentDeps, opts: CompleterOptions = {}) {
  const backoff = opts.backoff ?? DEFAULT_BACKOFF;
  const candidates = await findAbandonedKeys(deps.prisma, {
    procedure: PAYMENT_PROCEDURE,
    skipRecoveryPoints: [RECOVERY.started],
    idleSeconds: backoff.idleSeconds,
    limit: opts.limit ?? 20,
  });
  let settled = 0;
  for (const candidate of candidates) {
    if ((await drive(deps, candidate, opts)) === "settled") settled++;
  }
  return settled;
}

/**
 * An operator's "re-drive now": the same path as the completer, at once, whatever the backoff.
 * Recorded in the key's history. "busy" when an attempt holds the key (or won the race);
 * "not_started" for a key whose attempts never began its work (the completer skips those too).
 */
export async function redrivePayment(
  deps: PaymentDeps,
  keyId: bigint,
  opts: CompleterOptions & { by: string },
): Promise<Outcome | "not_found" | "not_started"> {
  const candidate = await findUnfinishedKey(deps.prisma, keyId);
  if (!candidate) return "not_found";
  // No attempt began its work (no payment exists, nothing was sent): driving it would create and
  // charge a payment nobody's attempt had started. Left to the client's retry, or to expiry.
  if (candidate.recoveryPoint === RECOVERY.started) return "not_started";
  await recordKeyEvent(deps.prisma, keyId, "redrive_requested", opts.by.slice(0, 200));
  return drive(deps, candidate, opts);
}

async function drive(deps: PaymentDeps, candidate: AbandonedCandidate, opts: CompleterOptions) {
  try {
    const taken = await takeOverAbandoned(deps.prisma, candidate, opts.backoff ?? DEFAULT_BACKOFF);
    if (!taken) return "busy";
    const { owner, accountId, requestParams, leaseSeconds } = taken;
    const result = await runAsOwner(deps.prisma, owner, leaseSeconds, async () => {
      try {
        const data = await executePayment(deps, owner, accountId, requestParams as PaymentRequest, {
          abandonAfterSeconds: opts.abandonAfterSeconds ?? DEFAULT_ABANDON_AFTER_SECONDS,
        });
        return { ok: true as const, data };
      } catch (error) {
        // tRPC's own test of an error's kind holds across module copies (it falls back to the name).
        return { ok: false as const, error: getTRPCErrorFromUnknown(error) };
      }
    });
    // Not stored, so still unfinished: an unexpected error, an outage, or an answer that may change.
    const unsettled =
      !result.ok &&
      (result.error.code === "INTERNAL_SERVER_ERROR" ||
        result.error.code === "SERVICE_UNAVAILABLE" ||
        errorDetailsOf(result.error)?.retryAfterSeconds !== undefined);
    return unsettled ? "failed" : "settled";
  } catch (error) {
    if (isLeaseLost(error)) return "busy";
    logger.warn({ job: "completer", keyId: String(candidate.id), err: errorField(error) }, "key failed");
    return "failed";
  }
}

/** The completer's backlog, for /api/metrics: payments past phase 1 whose attempt is gone. */
export function completerBacklog(prisma: Db) {
  return abandonedKeyStats(prisma, { procedure: PAYMENT_PROCEDURE, skipRecoveryPoints: [RECOVERY.started] });
}
