import { TRPCError } from "@trpc/server";
import type { Db } from "../db";
import {
  abandonedKeyStats,
  findAbandonedKeys,
  LeaseLostError,
  runAsOwner,
  takeOverAbandoned,
} from "../idempotency";
import { errorField, logger } from "../log";
import { executePayment, type PaymentDeps, type PaymentRequest, RECOVERY } from "./phases";

export const PAYMENT_PROCEDURE = "payments.create";

/**
 * Finds payments whose attempt died after phase 1 (the client may never come back) and drives
 * each to completion through the same phases as a request, so a charge the provider made is
 * always booked. Each key is taken over just before it is driven, and one key's failure never
 * stops the others. Returns how many keys it settled.
 */
export async function completeAbandonedPayments(
  deps: PaymentDeps,
  opts: { idleSeconds?: number; limit?: number } = {},
) {
  const candidates = await findAbandonedKeys(deps.prisma, {
    procedure: PAYMENT_PROCEDURE,
    skipRecoveryPoints: [RECOVERY.started],
    idleSeconds: opts.idleSeconds ?? 5,
    limit: opts.limit ?? 20,
  });
  let settled = 0;
  for (const candidate of candidates) {
    try {
      const taken = await takeOverAbandoned(deps.prisma, candidate);
      if (!taken) continue;
      const { owner, accountId, requestParams, leaseSeconds } = taken;
      const result = await runAsOwner(deps.prisma, owner, leaseSeconds, async () => {
        try {
          return {
            ok: true as const,
            data: await executePayment(deps, owner, accountId, requestParams as PaymentRequest),
          };
        } catch (error) {
          if (error instanceof TRPCError) return { ok: false as const, error };
          return {
            ok: false as const,
            error: new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: String(error), cause: error }),
          };
        }
      });
      if (
        result.ok ||
        (result.error.code !== "INTERNAL_SERVER_ERROR" && result.error.code !== "SERVICE_UNAVAILABLE")
      ) {
        settled++;
      }
    } catch (error) {
      if (!(error instanceof LeaseLostError))
        logger.warn({ job: "completer", keyId: String(candidate.id), err: errorField(error) }, "key failed");
    }
  }
  return settled;
}

/** The completer's backlog, for /api/metrics: payments past phase 1 whose attempt is gone. */
export function completerBacklog(prisma: Db) {
  return abandonedKeyStats(prisma, { procedure: PAYMENT_PROCEDURE, skipRecoveryPoints: [RECOVERY.started] });
}
