import { z } from "zod";
import { CANCEL_PROCEDURE, CAPTURE_PROCEDURE, cancel, capture } from "../../authorizations";
import { env } from "../../env";
import { IDEMPOTENCY_DEFAULTS, idempotency } from "../../keys";
import { paymentProvider } from "../../provider";
import { operatorsAccount } from "../../refunds";
import { adminIdempotentProcedure, router } from "../../trpc";
import { idempotentHeaders } from "../idempotent-meta";
import { ZPayment } from "../payments";
import { audited } from "./audited";
import { listPaymentsProcedure } from "./lists";

// One spelling per id: an upper-case UUID is the same payment, so the same fingerprint.
const paymentId = z.uuid().transform((id) => id.toLowerCase());
export const ZCapture = z.object({
  id: paymentId,
  amountMinor: z
    .number()
    .int()
    .positive()
    .max(2_147_483_647)
    .optional()
    .meta({ description: "At most what is authorized; the rest is released. Default: all of it." }),
});
export const ZCancel = z.object({ id: paymentId });

const ttlHours = IDEMPOTENCY_DEFAULTS.ttlSeconds / 3600;
const KEY_RULES = [
  "- The key is required (1–255 printable ASCII characters, a UUID recommended). Keys are scoped to the operators. Same key, same request, after completion: the first response again with `Idempotent-Replayed: true`; while the first runs: **409** `idempotency-key-in-use`; another request: **422**.",
  "- One capture or cancel per authorization, whatever keys they use: of a capture, a cancel and the expiry racing, one wins and every other gets **409** `payment-not-capturable` with its `state` (stored; not stored, with `Retry-After`, while the winner is still in progress).",
  `- A key and its stored response are kept **${ttlHours} hours**. 5xx answers are not stored: retry with the same key.`,
];

const errorResponses = (what: string) => ({
  400: "Idempotency-Key missing or malformed, or the body is invalid (a capture above what is authorized); nothing stored unless keyed.",
  401: "No valid Bearer ADMIN_TOKEN (a customer's API key cannot capture or cancel).",
  404: "No such payment; stored and replayed.",
  409: `The payment is not authorized, or another capture or cancel won (\`payment-not-capturable\`); or a request with this key is in flight. ${what}`,
  413: "The body is larger than the published cap.",
  422: "The key was used before with another request (`idempotency-key-reused`), or the amount is not valid in its currency.",
  503: "The payment provider is unavailable: retry with the same key.",
});

const deps = (ctx: {
  prisma: Parameters<typeof operatorsAccount>[0];
  provider?: ReturnType<typeof paymentProvider>;
}) => ({
  prisma: ctx.prisma,
  provider: ctx.provider ?? paymentProvider(),
});
const faultOf = (headers: Headers) =>
  env.isProduction ? undefined : (headers.get("x-provider-fault") ?? undefined);

/** An operator's capture and cancel of authorized payments, over tRPC and REST, keyed like refunds. */
export const adminPaymentsRouter = router({
  list: listPaymentsProcedure,
  capture: adminIdempotentProcedure(
    ZCapture,
    { procedure: CAPTURE_PROCEDURE, fields: ["id", "amountMinor"], leaseSeconds: env.PAYMENT_LEASE_SECONDS },
    operatorsAccount,
  )
    .meta({
      openapi: {
        method: "POST",
        path: "/payments/{id}/capture",
        tags: ["payments"],
        summary: "Capture an authorized payment (operators; idempotent)",
        description: [
          "Takes all or `amountMinor` of an authorized payment, once per `Idempotency-Key`; the rest of the hold is released. Refunds can then return at most what was captured. For operators: `Authorization: Bearer <ADMIN_TOKEN>`.",
          "",
          ...KEY_RULES,
        ].join("\n"),
        ...idempotentHeaders(
          "Unique per capture, reused for every retry of it.",
          "0b6f1c1e-6a9d-4d7e-9a57-3c2f1e0a9b12",
        ),
        successDescription: "Captured: the payment is `succeeded`; `amountCaptured` is what was taken.",
        errorResponses: errorResponses(""),
      },
    })
    .output(ZPayment)
    .mutation(
      idempotency.replayable(({ ctx, input }) =>
        audited(ctx, "payments.capture", `payment ${input.id}`, () =>
          capture.execute(
            deps(ctx),
            ctx.idempotency,
            {
              paymentId: input.id,
              amountMinor: input.amountMinor,
              reason: "operator",
              createdBy: ctx.adminActor,
            },
            { providerFault: faultOf(ctx.reqHeaders) },
          ),
        ),
      ),
    ),
  cancel: adminIdempotentProcedure(
    ZCancel,
    { procedure: CANCEL_PROCEDURE, fields: ["id"], leaseSeconds: env.PAYMENT_LEASE_SECONDS },
    operatorsAccount,
  )
    .meta({
      openapi: {
        method: "POST",
        path: "/payments/{id}/cancel",
        tags: ["payments"],
        summary: "Cancel an authorized payment (operators; idempotent)",
        description: [
          "Voids an authorization, once per `Idempotency-Key`: the provider releases the hold, nothing is charged, and the order can be paid again. For operators: `Authorization: Bearer <ADMIN_TOKEN>`.",
          "",
          ...KEY_RULES,
        ].join("\n"),
        ...idempotentHeaders(
          "Unique per cancel, reused for every retry of it.",
          "5d1c7e0f-2b8a-4c6e-8f3d-9a0b1c2d3e4f",
        ),
        successDescription: "Canceled: the payment is `canceled`, the hold released.",
        errorResponses: errorResponses(""),
      },
    })
    .output(ZPayment)
    .mutation(
      idempotency.replayable(({ ctx, input }) =>
        audited(ctx, "payments.cancel", `payment ${input.id}`, () =>
          cancel.execute(
            deps(ctx),
            ctx.idempotency,
            { paymentId: input.id, reason: "operator", createdBy: ctx.adminActor },
            { providerFault: faultOf(ctx.reqHeaders) },
          ),
        ),
      ),
    ),
});
