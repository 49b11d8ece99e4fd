import type { TRPCError } from "@trpc/server";
import { z } from "zod";
import { errorDetailsOf } from "../errors";

/**
 * The REST surface's errors as RFC 9457 problem details. Each type is a URI reference to its
 * entry on /docs/problems (relative: it resolves against the deployment that answered).
 */
export const PROBLEM_TYPES = {
  "idempotency-key-missing": {
    status: 400,
    title: "Idempotency-Key is missing",
    description: "This operation is idempotent and requires an Idempotency-Key header. Nothing was stored.",
  },
  "idempotency-key-invalid": {
    status: 400,
    title: "Idempotency-Key is malformed",
    description:
      "The key must be 1–255 printable ASCII characters, bare or as a Structured Field string, sent once. Nothing was stored.",
  },
  "idempotency-key-in-use": {
    status: 409,
    title: "A request is outstanding for this Idempotency-Key",
    description: "The first request with this key is still running: retry after `Retry-After` seconds.",
  },
  "idempotency-key-reused": {
    status: 422,
    title: "Idempotency-Key is already used",
    description: "The key was used before with another request (another order or payment method).",
  },
  "card-declined": {
    status: 402,
    title: "Card declined",
    description:
      "The card was declined (`declineCode`). Stored: a retry with the same key gets this answer again.",
  },
  "payment-refused": {
    status: 402,
    title: "Payment refused",
    description:
      "The payment provider refused the payment for good (unknown payment method). Stored and replayed.",
  },
  "payment-abandoned": {
    status: 402,
    title: "Payment abandoned",
    description:
      "The payment was abandoned before it reached the payment provider; nothing was charged. Stored and replayed.",
  },
  "payment-canceled": {
    status: 402,
    title: "Payment canceled",
    description:
      "The payment was canceled at the provider before any money was taken (`cancellationReason`: `abandoned` when the shopper's 3-D Secure step was not completed in time). Nothing was charged; the order can be paid again. Stored and replayed.",
  },
  "payment-not-capturable": {
    status: 409,
    title: "Payment not capturable",
    description:
      "Only an authorized payment is captured or canceled, once (`paymentStatus`; `state`: `captured`, `canceled`, `expired`, or the other action still in progress). Stored and replayed when final; while another capture or cancel of the payment is in progress, not stored and sent with `Retry-After`.",
  },
  "order-already-paid": {
    status: 409,
    title: "Order already paid",
    description:
      "Another key's payment of this order succeeded (stored), or is still pending (with `Retry-After`, not stored).",
  },
  "refund-exceeds-captured": {
    status: 422,
    title: "Refund exceeds what is left to refund",
    description:
      "The amount is more than the payment's captured amount less its other refunds (`refundableMinor`, and `pendingMinor` still in progress). Stored and replayed when final; while other refunds are pending, not stored and sent with `Retry-After`.",
  },
  "payment-not-refundable": {
    status: 422,
    title: "Payment not refundable",
    description: "Only a succeeded payment is refunded (`paymentStatus`). Stored and replayed.",
  },
  "refund-abandoned": {
    status: 422,
    title: "Refund abandoned",
    description:
      "The refund was abandoned before it reached the payment provider; nothing was refunded. Stored and replayed.",
  },
  "amount-invalid-for-currency": {
    status: 422,
    title: "Amount not valid in its currency",
    description:
      "The amount is not one Stripe takes in this currency (`amountCode`): below its minimum charge (`minimumMinor`), above its maximum (`maximumMinor`), or not a multiple of its smallest step (`stepMinor`: 10 for three-decimal currencies, 100 for ISK). Final: stored and replayed where the request is keyed.",
  },
  "invalid-request": {
    status: 400,
    title: "Invalid request",
    description: "The body or a parameter is invalid; `errors` names each field. Nothing was stored.",
  },
  unauthenticated: {
    status: 401,
    title: "Authentication required",
    description: "Send `Authorization: Bearer <API key>` (the operators' endpoints: `Bearer <ADMIN_TOKEN>`).",
  },
  forbidden: {
    status: 403,
    title: "Forbidden",
    description: "The API key may not do this: a `read_only` key only reads. Nothing was stored.",
  },
  "rate-limited": {
    status: 429,
    title: "Too many requests",
    description:
      "The account's allowance for this kind of call is spent: retry after `Retry-After` seconds (with the same Idempotency-Key). Nothing was stored.",
  },
  "not-found": { status: 404, title: "Not found", description: "No such resource for this account." },
  "payload-too-large": {
    status: 413,
    title: "Request body too large",
    description: "Bodies are limited to `IDEMPOTENCY_MAX_BODY_BYTES` (65536 by default). Nothing was stored.",
  },
  "unsupported-media-type": {
    status: 415,
    title: "Unsupported media type",
    description: "Send request bodies as `Content-Type: application/json`.",
  },
  "provider-unavailable": {
    status: 503,
    title: "Payment provider unavailable",
    description:
      "Not stored: retry with the same Idempotency-Key after `Retry-After` seconds, and the payment resumes where it stopped.",
  },
  "database-unavailable": {
    status: 503,
    title: "Database unavailable",
    description:
      "The database could not be reached (a failover or restart). Not stored: retry with the same Idempotency-Key after `Retry-After` seconds.",
  },
  "webhook-signature-invalid": {
    status: 400,
    title: "Webhook signature invalid",
    description:
      "`POST /api/webhooks/stripe`: the `Stripe-Signature` header is missing, does not match the raw body under any configured secret, or is older than five minutes. Nothing was changed.",
  },
  "event-not-applied": {
    status: 503,
    title: "Event not applied yet",
    description:
      "`POST /api/webhooks/stripe`: the event's payment or refund could not be settled now (the database or the provider did not answer). Nothing was recorded: deliver the event again.",
  },
  "internal-error": {
    status: 500,
    title: "Internal server error",
    description: "Not stored: retry with the same Idempotency-Key.",
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

export type ProblemSlug = keyof typeof PROBLEM_TYPES;
export const PROBLEM_DOCS_PATH = "/docs/problems";
export const problemTypeUri = (slug: ProblemSlug) => `${PROBLEM_DOCS_PATH}#${slug}`;
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Every `type` the API answers: ours, and `about:blank` for a status with no more meaning. */
const PROBLEM_TYPE_URIS = [
  ...(Object.keys(PROBLEM_TYPES) as ProblemSlug[]).map(problemTypeUri),
  "about:blank",
] as const;

export const ZProblem = z
  .object({
    type: z
      .enum(PROBLEM_TYPE_URIS)
      .meta({ description: `A URI reference to the problem's documentation (${PROBLEM_DOCS_PATH}).` }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: "For invalid-request: one entry per invalid field." }),
  })
  .catchall(z.unknown())
  .meta({
    id: "Problem",
    description:
      "RFC 9457 problem details. Extension members carry the outcome's facts, e.g. `paymentId` and `declineCode` on card-declined.",
  });
export type TProblem = z.infer<typeof ZProblem>;

export function problemResponse(problem: TProblem, headers: HeadersInit = {}): Response {
  const out = new Headers(headers);
  out.set("content-type", PROBLEM_CONTENT_TYPE);
  return new Response(JSON.stringify(problem), { status: problem.status, headers: out });
}

export function problemOf(
  slug: ProblemSlug,
  detail: string,
  extensions: Record<string, unknown> = {},
): TProblem {
  const { status, title } = PROBLEM_TYPES[slug];
  return { type: problemTypeUri(slug), title, status, detail, ...extensions };
}

/**
 * The one mapping from a procedure's error (live or replayed from the key store) to a problem.
 * It depends only on the error's code, message and details, so a replay renders the same bytes.
 */
export function problemFromError(error: TRPCError, status: number): TProblem {
  const details = errorDetailsOf(error)?.details;
  const reason = details?.reason;
  const detail = error.code === "INTERNAL_SERVER_ERROR" ? "Internal server error." : error.message;
  const withDetails = (slug: ProblemSlug) => problemOf(slug, detail, { ...details, status });
  if (error.cause instanceof z.ZodError) {
    const errors = error.cause.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
    const summary = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ");
    return problemOf("invalid-request", `The request is invalid: ${summary}`, { errors });
  }
  switch (error.code) {
    case "PAYMENT_REQUIRED":
      return withDetails(
        reason === "card_declined"
          ? "card-declined"
          : reason === "payment_abandoned"
            ? "payment-abandoned"
            : reason === "payment_canceled"
              ? "payment-canceled"
              : "payment-refused",
      );
    case "CONFLICT":
      return withDetails(
        reason === "order_already_paid"
          ? "order-already-paid"
          : reason === "payment_not_capturable"
            ? "payment-not-capturable"
            : "idempotency-key-in-use",
      );
    case "UNPROCESSABLE_CONTENT":
      return withDetails(
        reason === "refund_exceeds_captured"
          ? "refund-exceeds-captured"
          : reason === "payment_not_refundable"
            ? "payment-not-refundable"
            : reason === "refund_abandoned"
              ? "refund-abandoned"
              : reason === "amount_invalid_for_currency"
                ? "amount-invalid-for-currency"
                : "idempotency-key-reused",
      );
    case "BAD_REQUEST":
    case "PARSE_ERROR":
      return withDetails("invalid-request");
    case "UNAUTHORIZED":
      return withDetails("unauthenticated");
    case "FORBIDDEN":
      return withDetails("forbidden");
    case "TOO_MANY_REQUESTS":
      return withDetails("rate-limited");
    case "NOT_FOUND":
      return withDetails("not-found");
    case "PAYLOAD_TOO_LARGE":
      return withDetails("payload-too-large");
    case "UNSUPPORTED_MEDIA_TYPE":
      return withDetails("unsupported-media-type");
    case "SERVICE_UNAVAILABLE":
      return withDetails("provider-unavailable");
    case "INTERNAL_SERVER_ERROR":
      return withDetails("internal-error");
    default:
      // No semantics beyond the status code (RFC 9457 section 4.2.1).
      return { type: "about:blank", title: error.code, status, detail, ...details };
  }
}
