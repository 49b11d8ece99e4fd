import { z } from "zod";
import { env } from "../../env";
import { IDEMPOTENCY_DEFAULTS, idempotency } from "../../keys";
import { paymentProvider } from "../../provider";
import { operatorsAccount, REFUND_PROCEDURE, refund, ZRefund } from "../../refunds";
import { adminIdempotentProcedure, router } from "../../trpc";
import { idempotentHeaders } from "../idempotent-meta";
import { audited } from "./audited";
import { listRefundsProcedure } from "./lists";

export const ZCreateRefund = z.object({
  // One spelling per id: an upper-case UUID is the same payment, so the same fingerprint.
  paymentId: z.uuid().transform((id) => id.toLowerCase()),
  amountMinor: z.number().int().positive().max(2_147_483_647),
  reason: z.string().trim().min(1).max(200),
});

const ttlHours = IDEMPOTENCY_DEFAULTS.ttlSeconds / 3600;

const DESCRIPTION = [
  "Refunds part or all of a succeeded payment, once per `Idempotency-Key`. For operators: `Authorization: Bearer <ADMIN_TOKEN>`.",
  "",
  "- The key is required (1–255 printable ASCII characters, a UUID recommended). Keys are scoped to the operators and the request is fingerprinted by `paymentId`, `amountMinor` and `reason`.",
  "- Same key, same request, after completion: the first response again with `Idempotent-Replayed: true`. Same key while the first is running: **409** with `Retry-After`. Same key, another request: **422** (`idempotency-key-reused`).",
  "- Refunds of one payment never total more than it captured, whatever keys they use: beyond what is left to refund is **422** `refund-exceeds-captured` (stored; not stored, with `Retry-After`, while another refund of the payment is still pending). A payment that did not succeed: **422** `payment-not-refundable`. An amount not valid in the payment's currency as Stripe defines it (a three-decimal currency's last digit must be 0, ISK whole krónur): **422** `amount-invalid-for-currency` (stored).",
  `- A key and its stored response are kept **${ttlHours} hours** after completion. 5xx answers are not stored: retry with the same key and the refund resumes where it stopped.`,
].join("\n");

export const adminRefundsRouter = router({
  list: listRefundsProcedure,
  create: adminIdempotentProcedure(
    ZCreateRefund,
    {
      procedure: REFUND_PROCEDURE,
      fields: ["paymentId", "amountMinor", "reason"],
      leaseSeconds: env.PAYMENT_LEASE_SECONDS,
    },
    operatorsAccount,
  )
    .meta({
      openapi: {
        method: "POST",
        path: "/refunds",
        tags: ["refunds"],
        summary: "Refund a payment (operators; idempotent)",
        description: DESCRIPTION,
        ...idempotentHeaders(
          `Unique per refund, reused for every retry of it; kept ${ttlHours} hours after completion.`,
          "4b9a7d0e-9f7c-4a39-a1a5-1d0f5b8f2c11",
        ),
        successDescription: "The refund succeeded at the provider and is booked.",
        errorResponses: {
          400: "Idempotency-Key missing or malformed, or the body is invalid; nothing stored.",
          401: "No valid Bearer ADMIN_TOKEN.",
          404: "No such payment; stored and replayed.",
          409: "A request with this key is in flight (with `Retry-After`).",
          413: "The body is larger than the published cap.",
          422: "Beyond what is left to refund (`refund-exceeds-captured`), a payment that did not succeed (`payment-not-refundable`), an amount not valid in its currency (`amount-invalid-for-currency`), or the key used before with another request (`idempotency-key-reused`).",
          503: "The payment provider is unavailable: retry with the same key.",
        },
      },
    })
    .output(ZRefund)
    .mutation(
      idempotency.replayable(({ ctx, input }) =>
        audited(ctx, "refunds.create", `payment ${input.paymentId}`, () =>
          refund.execute(
            { prisma: ctx.prisma, provider: ctx.provider ?? paymentProvider() },
            ctx.idempotency,
            { ...input, createdBy: ctx.adminActor },
            {
              providerFault: env.isProduction
                ? undefined
                : (ctx.reqHeaders.get("x-provider-fault") ?? undefined),
            },
          ),
        ),
      ),
    ),
});
