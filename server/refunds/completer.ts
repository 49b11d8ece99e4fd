import type { DriveOutcome } from "@idempotent-checkout/idempotency/admin";
import type { Db } from "../db";
import { type Driver, idempotency, type RecoveryBackoff } from "../keys";
import {
  executeRefund,
  REFUND_PROCEDURE,
  REFUND_RECOVERY,
  type RefundDeps,
  type RefundRequest,
} from "./phases";

export interface RefundCompleterOptions {
  backoff?: RecoveryBackoff;
  /** A refund whose request never left is ended after this long (nothing refunded); one whose may have is re-sent. */
  abandonAfterSeconds?: number;
  limit?: number;
}

function driver(deps: RefundDeps, opts: RefundCompleterOptions): Driver {
  return {
    procedure: REFUND_PROCEDURE,
    startedPoint: REFUND_RECOVERY.started,
    execute: (key) =>
      executeRefund(deps, key.owner, key.requestParams as RefundRequest, {
        createdBy: "completer",
        abandonAfterSeconds: opts.abandonAfterSeconds,
      }),
  };
}

/**
 * Drives refunds whose attempt died after phase 1 to an answer, through the same phases as a
 * request, as the payments' completer does: a refund the provider made is always booked, and a
 * refund whose request may have left is never ended as "nothing refunded".
 */
export function completeAbandonedRefunds(deps: RefundDeps, opts: RefundCompleterOptions = {}) {
  return idempotency.completer(deps.prisma, driver(deps, opts)).run(opts);
}

/** An operator's "re-drive now" of one refund key: the completer's path, at once. */
export function redriveRefund(
  deps: RefundDeps,
  keyId: bigint,
  opts: RefundCompleterOptions & { by: string },
): Promise<DriveOutcome | "not_found" | "not_started"> {
  return idempotency.completer(deps.prisma, driver(deps, opts)).redrive(keyId, opts);
}

/** The refund completer's backlog, for /api/metrics. */
export function refundCompleterBacklog(prisma: Db) {
  return idempotency.backlog(prisma, { procedure: REFUND_PROCEDURE, startedPoint: REFUND_RECOVERY.started });
}
