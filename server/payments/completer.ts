import { TRPCError } from "@trpc/server";
import { LeaseLostError, runAsOwner, takeOverAbandonedKeys } from "../idempotency";
import { executePayment, type PaymentDeps, type PaymentRequest, RECOVERY } from "./phases";

export const PAYMENT_PROCEDURE = "payments.create";

/**
 * Finds payments whose attempt died after phase 1 (the client may never come back) and drives
 * each to completion through the same phases as a request, so a charge the provider made is
 * always booked. Returns how many keys it settled.
 */
export async function completeAbandonedPayments(
  deps: PaymentDeps,
  opts: { idleSeconds?: number; limit?: number } = {},
) {
  const abandoned = await takeOverAbandonedKeys(deps.prisma, {
    procedure: PAYMENT_PROCEDURE,
    skipRecoveryPoints: [RECOVERY.started],
    idleSeconds: opts.idleSeconds ?? 5,
    limit: opts.limit ?? 20,
  });
  let settled = 0;
  for (const { owner, accountId, requestParams, leaseSeconds } of abandoned) {
    try {
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
      if (!(error instanceof LeaseLostError)) throw error;
    }
  }
  return settled;
}
