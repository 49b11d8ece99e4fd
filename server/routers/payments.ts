import { z } from "zod";
import { ZCurrencyOfAmount } from "../../shared/currency";
import { env } from "../env";
import { IDEMPOTENCY_DEFAULTS, idempotency } from "../keys";
import { createPaymentPhase, executePayment, PAYMENT_PROCEDURE } from "../payments/operation";
import { getPaymentForAccount } from "../payments/orders";
import { PAYMENT_STATUSES, paymentView } from "../payments/views";
import { paymentProvider } from "../provider";
import { admittedBy, authedProcedure, idempotentProcedure, router } from "../trpc";
import { idempotentHeaders } from "./idempotent-meta";

export const ZCreatePayment = z.object({
  // One spelling per id: an upper-case UUID is the same order, so the same fingerprint.
  orderId: z.uuid().transform((id) => id.toLowerCase()),
  paymentMethod: z
    .string()
    .regex(/^pm_[A-Za-z0-9_]{1,64}$/, "must be a payment method id such as pm_card_visa")
    .meta({ examples: ["pm_card_visa", "pm_card_declined", "pm_card_slow"] }),
  captureMethod: z.enum(["automatic", "manual"]).optional().meta({
    description:
      "`manual`: authorize only; the payment answers `authorized` and holds the amount until an operator captures it (or it expires). Default: the merchant's setting (`automatic`).",
  }),
  returnUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional()
    .meta({
      description:
        "Where the shopper's browser comes back after a 3-D Secure step (the provider appends `payment_intent` and `redirect_status`). Without it, a card that asks for the step cannot complete it.",
    }),
});

export const ZPayment = z
  .object({
    id: z.string(),
    orderId: z.string(),
    /** Integer minor units of `currency`. */
    amount: z.number().int(),
    currency: ZCurrencyOfAmount,
    status: z.enum(PAYMENT_STATUSES),
    providerChargeId: z.string().nullable(),
    captureMethod: z.enum(["automatic", "manual"]),
    /** What was taken: all of it for an automatic payment, the capture's amount for a manual one. */
    amountCaptured: z.number().int(),
    /** An authorization's deadline (status `authorized`): canceled then unless captured. */
    captureBefore: z.iso.datetime({ offset: true }).nullable(),
    /** While status is `requires_action`: send the shopper to `url`, then retry with the same key. */
    nextAction: z.object({ type: z.literal("redirect_to_url"), url: z.string() }).nullable(),
  })
  .meta({ id: "Payment" });

const ttlHours = IDEMPOTENCY_DEFAULTS.ttlSeconds / 3600;

/** What the REST surface and the OpenAPI document say about the key (docs/api.md has the rest). */
const IDEMPOTENCY_DESCRIPTION = [
  "Charges the order once per `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header).",
  "",
  '- The key is required: 1–255 printable ASCII characters, a UUID recommended; a Structured Field string (`"…"`) is accepted too. Missing or malformed: **400**.',
  "- Keys are scoped to the authenticated account and the request is fingerprinted by `orderId`, `paymentMethod`, `captureMethod` and `returnUrl`.",
  '- `captureMethod: "manual"` authorizes only: the answer is `authorized` with `captureBefore`; an operator captures (`POST /payments/{id}/capture`) or cancels it, or it is canceled at the deadline.',
  '- A card that asks for 3-D Secure answers **200** with `status: "requires_action"` and `nextAction.url`: send the shopper there; the answer is not stored, and a retry with the same key (after the shopper returns to `returnUrl`) answers the outcome. A step not completed within `PAYMENT_ACTION_TIMEOUT_SECONDS` is canceled: **402** `payment-canceled`, nothing charged.',
  "- Same key, same request, after completion: the first response again — same status, same body — with `Idempotent-Replayed: true`. Declined cards (**402**) are stored and replayed too.",
  "- Same key while the first request is still running: **409** with `Retry-After`.",
  "- Same key, another request: **422**.",
  `- Expiry: a key and its stored response are kept for **${ttlHours} hours** after the request completes; reused after that, the key is a new request.`,
  "- 5xx answers are not stored: retry with the same key and the payment resumes where it stopped.",
  "- The same key sent through the tRPC API (`/api/trpc/payments.create`) is the same key: the same request replays, another is refused with 422.",
].join("\n");

export const paymentsRouter = router({
  create: idempotentProcedure(ZCreatePayment, {
    procedure: PAYMENT_PROCEDURE,
    fields: ["orderId", "paymentMethod", "captureMethod", "returnUrl"],
    leaseSeconds: env.PAYMENT_LEASE_SECONDS,
    firstPhase: createPaymentPhase,
    // Decided after the claim (a replay costs nothing), undone with it when refused: a 429
    // leaves no pending payment for the completer to charge later.
    admit: admittedBy("paymentsByAccount"),
  })
    .meta({
      openapi: {
        method: "POST",
        path: "/payments",
        tags: ["payments"],
        summary: "Pay an order (idempotent)",
        description: IDEMPOTENCY_DESCRIPTION,
        ...idempotentHeaders(
          `Unique per payment attempt, reused for every retry of it; kept ${ttlHours} hours after completion.`,
          "8e03978e-40d5-43e8-bc93-6894a57f9324",
        ),
        successDescription:
          "The payment succeeded, is authorized (manual capture), or requires the shopper's 3-D Secure step (`requires_action`, not stored).",
        errorResponses: {
          400: "Idempotency-Key missing or malformed, or the body is invalid; nothing stored.",
          401: "No valid Bearer API key.",
          402: "The card was declined, the provider refused the payment, or its 3-D Secure step was not completed in time (`payment-canceled`); stored and replayed.",
          403: "The API key is read-only; nothing stored.",
          404: "No such order for this account; stored and replayed.",
          409: "A request with this key is in flight (with `Retry-After`), or the order is already paid.",
          413: "The body is larger than the published cap.",
          422: "The key was used before with another request.",
          429: "Too many payment attempts for this account: retry after `Retry-After` seconds; nothing stored.",
          503: "The payment provider is unavailable: retry with the same key.",
        },
      },
    })
    .output(ZPayment)
    .mutation(
      idempotency.replayable(({ ctx, input }) =>
        executePayment(
          { prisma: ctx.prisma, provider: ctx.provider ?? paymentProvider() },
          ctx.idempotency,
          ctx.account.id,
          input,
          // Test set-ups may ask the provider for a fault (latency, 5xx, drop) on this request.
          {
            providerFault: env.isProduction
              ? undefined
              : (ctx.reqHeaders.get("x-provider-fault") ?? undefined),
          },
        ),
      ),
    ),
  get: authedProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payments/{id}",
        tags: ["payments"],
        summary: "A payment of yours",
        errorResponses: {
          400: "The id is not a UUID.",
          401: "No valid Bearer API key.",
          404: "No such payment.",
        },
      },
    })
    .input(z.object({ id: z.uuid() }))
    .output(ZPayment)
    .query(async ({ ctx, input }) =>
      paymentView(await getPaymentForAccount(ctx.prisma, ctx.account.id, input.id)),
    ),
});

export { PAYMENT_PROCEDURE };
