import { z } from "zod";
import { env } from "../env";
import { PAYMENT_PROCEDURE } from "../payments/completer";
import { createPaymentPhase, executePayment } from "../payments/phases";
import { paymentProvider } from "../payments/provider";
import { idempotentProcedure, router } from "../trpc";

export const ZCreatePayment = z.object({
  // One spelling per id: an upper-case UUID is the same order, so the same fingerprint.
  orderId: z.uuid().transform((id) => id.toLowerCase()),
  paymentMethod: z
    .string()
    .regex(/^pm_[A-Za-z0-9_]{1,64}$/, "must be a payment method id such as pm_card_visa"),
});

export const ZPayment = z.object({
  id: z.string(),
  orderId: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  status: z.enum(["pending", "succeeded", "declined", "failed"]),
  providerChargeId: z.string().nullable(),
});

export const paymentsRouter = router({
  create: idempotentProcedure(ZCreatePayment, {
    fields: ["orderId", "paymentMethod"],
    leaseSeconds: env.PAYMENT_LEASE_SECONDS,
    firstPhase: createPaymentPhase,
  })
    .output(ZPayment)
    .mutation(({ ctx, input }) =>
      executePayment(
        { prisma: ctx.prisma, provider: ctx.provider ?? paymentProvider() },
        ctx.idempotency,
        ctx.account.id,
        input,
        // Test set-ups may ask the provider for a fault (latency, 5xx, drop) on this request.
        {
          providerFault: env.isProduction ? undefined : (ctx.reqHeaders.get("x-provider-fault") ?? undefined),
        },
      ),
    ),
});

export { PAYMENT_PROCEDURE };
