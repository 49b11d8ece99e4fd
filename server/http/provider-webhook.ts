import type { Db } from "../db";
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable } from "../db/unavailable";
import { env } from "../env";
import { failpoint } from "../failpoints";
import type { PaymentProvider } from "../provider";
import { applyProviderEvent, verifyEvent } from "../provider-events";
import { readCapped } from "./capped-body";
import { problemOf, problemResponse } from "./problems";
import { observeRequest } from "./request-log";

/** Where the provider delivers its events (the Next route app/api/webhooks/stripe, the API server). */
export const PROVIDER_WEBHOOK_PATH = "/api/webhooks/stripe";

/** Stripe's events are a few kB; anything this large is not one of them. */
const WEBHOOK_BODY_CAP = 256 * 1024;

/**
 * `POST /api/webhooks/stripe`: the provider's event, verified on its raw bytes, applied at most
 * once, and answered 2xx only after what it changed has committed. A failure that may pass (the
 * database, the provider) is a 503, so the provider delivers it again; bad input is a 4xx and
 * changes nothing.
 */
export function handleProviderWebhook(
  req: Request,
  deps: { prisma: () => Db; provider: () => PaymentProvider; secrets?: readonly string[] },
): Promise<Response> {
  return observeRequest(
    req,
    { procedure: "webhooks.stripe" },
    async ({ log }) => {
      const body = await readCapped(req, WEBHOOK_BODY_CAP);
      if (!body)
        return problemResponse(
          problemOf("payload-too-large", `The body is larger than ${WEBHOOK_BODY_CAP} bytes.`),
        );
      const verified = verifyEvent(
        new TextDecoder().decode(body),
        req.headers.get("stripe-signature"),
        deps.secrets ?? env.PAYMENT_PROVIDER_WEBHOOK_SECRETS,
      );
      if (!verified.ok) {
        log.warn({ reason: verified.reason, detail: verified.message }, "provider webhook refused");
        return problemResponse(
          verified.reason === "signature"
            ? problemOf("webhook-signature-invalid", verified.message)
            : problemOf("invalid-request", verified.message),
        );
      }
      try {
        const applied = await applyProviderEvent(
          { prisma: deps.prisma(), provider: deps.provider() },
          verified.event,
          "webhook",
        );
        // The crash tests' point: committed, not yet answered (the provider delivers it again).
        failpoint("after_webhook_applied");
        return Response.json({ received: true, id: verified.event.id, ...applied });
      } catch (error) {
        if (!databaseUnavailable(error) && (error as { code?: unknown }).code !== "EVENT_NOT_APPLIED")
          throw error;
        log.warn({ eventId: verified.event.id, err: String(error) }, "provider event not applied now");
        return problemResponse(
          problemOf("event-not-applied", "The event could not be applied now: deliver it again."),
          { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) },
        );
      }
    },
    () => problemResponse(problemOf("internal-error", "Internal server error.")),
  );
}
