import { DEFAULT_BACKOFF, type DriveOutcome } from "@idempotent-checkout/idempotency/admin";
import type { Db } from "../db";
import { env } from "../env";
import { type Driver, idempotency, type RecoveryBackoff } from "../keys";
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

/** Payments as the completer drives them: the same phases as a request. */
function driver(deps: PaymentDeps, opts: CompleterOptions): Driver {
  return {
    procedure: PAYMENT_PROCEDURE,
    startedPoint: RECOVERY.started,
    execute: (key) =>
      executePayment(deps, key.owner, key.accountId, key.requestParams as PaymentRequest, {
        abandonAfterSeconds: opts.abandonAfterSeconds ?? DEFAULT_ABANDON_AFTER_SECONDS,
      }),
  };
}

/**
 * Finds payments whose attempt died after phase 1 (the client may never come back) and drives
 * each to completion through the same phases as a request, so a charge the provider made is
 * always booked. It never gives up: a key that keeps failing is tried again on a capped backoff
 * of its own, and shows as needs_attention for an operator. Each key is taken over just before it
 * is driven, and one key's failure never stops the others. Returns how many keys it settled.
 */
export function completeAbandonedPayments(deps: PaymentDeps, opts: CompleterOptions = {}) {
  return idempotency.completer(deps.prisma, driver(deps, opts)).run(opts);
}

/**
 * An operator's "re-drive now": the same path as the completer, at once, whatever the backoff.
 * Recorded in the key's history. "busy" when an attempt holds the key (or won the race);
 * "not_started" for a key whose attempts never began its work (no payment exists, nothing was
 * sent: driving it would create and charge a payment nobody's attempt had started; it is left to
 * the client's retry, or to expiry). The completer skips those too.
 */
export function redrivePayment(
  deps: PaymentDeps,
  keyId: bigint,
  opts: CompleterOptions & { by: string },
): Promise<DriveOutcome | "not_found" | "not_started"> {
  return idempotency.completer(deps.prisma, driver(deps, opts)).redrive(keyId, opts);
}

/** The completer's backlog, for /api/metrics: payments past phase 1 whose attempt is gone. */
export function completerBacklog(prisma: Db) {
  return idempotency.backlog(prisma, { procedure: PAYMENT_PROCEDURE, startedPoint: RECOVERY.started });
}
