import type { Db } from "../db";
import { newId } from "../db";
import { env } from "../env";
import { type Poller, startPoller } from "../outbox";
import { type AddressPolicy, policyFromEnv } from "./address-guard";
import { retryAfterSeconds, retryDelaySeconds } from "./schedule";
import { signatureHeader } from "./secrets";
import { type SendResult, sendWebhook } from "./send";

export interface DeliveryOptions {
  batchSize: number;
  /** Per attempt: resolution, connection, request and answer together. */
  timeoutMs: number;
  /** A claimed message is due again after this, should its worker die mid-attempt. */
  leaseSeconds: number;
  /** Delays between attempts, after the first; the message fails after the last. */
  scheduleSeconds: readonly number[];
  /** An endpoint failing every attempt this long is disabled. */
  disableAfterSeconds: number;
  /** A `Retry-After` longer than this is shortened to it. */
  retryAfterCapSeconds: number;
  policy: AddressPolicy;
  idleMs: number;
  /** Only these endpoints' messages (tests, and a targeted run); all when unset. */
  endpointIds?: readonly string[];
}

export function deliveryOptions(overrides: Partial<DeliveryOptions> = {}): DeliveryOptions {
  return {
    batchSize: 20,
    timeoutMs: 15_000,
    leaseSeconds: 60,
    scheduleSeconds: env.WEBHOOK_RETRY_SCHEDULE_SECONDS,
    disableAfterSeconds: env.WEBHOOK_DISABLE_AFTER_SECONDS,
    retryAfterCapSeconds: 36_000,
    policy: policyFromEnv(),
    idleMs: 500,
    ...overrides,
  };
}

interface ClaimedMessage {
  id: string;
  endpoint_id: string;
  payload: unknown;
  attempts: number;
  url: string;
  secrets: string[] | null;
}

/**
 * Claims due messages of enabled endpoints (decision 0186): SKIP LOCKED keeps two workers off
 * the same rows, and the claim itself moves `next_attempt_at` a lease ahead and counts the
 * attempt, in one statement, so no transaction stays open during the HTTP call. A worker that
 * dies mid-attempt leaves the message due again when the lease ends; its late outcome is fenced
 * off by the attempt count.
 */
async function claimDueMessages(prisma: Db, o: DeliveryOptions): Promise<ClaimedMessage[]> {
  const only = o.endpointIds ? [...o.endpointIds] : null;
  return prisma.$queryRaw<ClaimedMessage[]>`
    WITH due AS (
      SELECT m.id FROM webhook_messages m
        JOIN webhook_endpoints e ON e.id = m.endpoint_id
       WHERE m.status = 'pending' AND m.next_attempt_at <= now()
         AND e.disabled_at IS NULL AND e.deleted_at IS NULL
         AND (${only}::uuid[] IS NULL OR m.endpoint_id = ANY(${only}::uuid[]))
       ORDER BY m.next_attempt_at
       LIMIT ${o.batchSize}
       FOR UPDATE OF m SKIP LOCKED)
    UPDATE webhook_messages m
       SET attempts = m.attempts + 1,
           next_attempt_at = now() + make_interval(secs => ${o.leaseSeconds}::float8)
      FROM due, webhook_endpoints e
     WHERE m.id = due.id AND e.id = m.endpoint_id
    RETURNING m.id, m.endpoint_id, m.payload, m.attempts, e.url,
      (SELECT array_agg(s.secret ORDER BY s.created_at DESC) FROM webhook_secrets s
        WHERE s.endpoint_id = m.endpoint_id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secrets`;
}

type Outcome = "succeeded" | "retry" | "failed" | "gone";

function outcomeOf(result: SendResult, attempts: number, o: DeliveryOptions): Outcome {
  if (result.status !== null && result.status >= 200 && result.status < 300) return "succeeded";
  if (result.status === 410) return "gone";
  return retryDelaySeconds(attempts, o.scheduleSeconds) === null ? "failed" : "retry";
}

/**
 * The attempt's record and its effect, in one transaction: the message settled or rescheduled
 * (only while the claim is still this attempt's), the endpoint's run of failures, and its
 * disabling on a 410 or after `disableAfterSeconds` of failures.
 */
async function recordAttempt(
  prisma: Db,
  message: ClaimedMessage,
  startedAt: Date,
  result: SendResult,
  o: DeliveryOptions,
): Promise<Outcome> {
  const outcome = outcomeOf(result, message.attempts, o);
  const scheduled = retryDelaySeconds(message.attempts, o.scheduleSeconds) ?? 0;
  const asked = retryAfterSeconds(result.retryAfter, new Date(), o.retryAfterCapSeconds);
  // The receiver's Retry-After replaces the scheduled delay.
  const delay = asked ?? scheduled;
  await prisma.$transaction([
    prisma.webhookAttempt.create({
      data: {
        id: newId(),
        messageId: message.id,
        endpointId: message.endpoint_id,
        attemptNumber: message.attempts,
        startedAt,
        outcome: outcome === "succeeded" ? "succeeded" : "failed",
        httpStatus: result.status,
        latencyMs: result.latencyMs,
        responseExcerpt: result.excerpt,
      },
    }),
    outcome === "succeeded"
      ? prisma.$executeRaw`
          UPDATE webhook_messages SET status = 'succeeded', delivered_at = now()
           WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending'`
      : outcome === "retry"
        ? prisma.$executeRaw`
            UPDATE webhook_messages SET next_attempt_at = now() + make_interval(secs => ${delay}::float8)
             WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending'`
        : prisma.$executeRaw`
            UPDATE webhook_messages SET status = 'failed'
             WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending'`,
    outcome === "succeeded"
      ? prisma.$executeRaw`
          UPDATE webhook_endpoints SET failing_since = NULL
           WHERE id = ${message.endpoint_id}::uuid AND failing_since IS NOT NULL`
      : outcome === "gone"
        ? prisma.$executeRaw`
            UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'gone'
             WHERE id = ${message.endpoint_id}::uuid AND disabled_at IS NULL`
        : prisma.$executeRaw`
            UPDATE webhook_endpoints
               SET failing_since = coalesce(failing_since, ${startedAt}),
                   disabled_at = CASE WHEN disabled_at IS NULL
                                       AND now() - coalesce(failing_since, ${startedAt})
                                           >= make_interval(secs => ${o.disableAfterSeconds}::float8)
                                      THEN now() ELSE disabled_at END,
                   disabled_reason = CASE WHEN disabled_at IS NULL
                                           AND now() - coalesce(failing_since, ${startedAt})
                                               >= make_interval(secs => ${o.disableAfterSeconds}::float8)
                                          THEN 'failing' ELSE disabled_reason END
             WHERE id = ${message.endpoint_id}::uuid`,
  ]);
  return outcome;
}

async function deliverOne(prisma: Db, message: ClaimedMessage, o: DeliveryOptions): Promise<Outcome> {
  const body = JSON.stringify(message.payload);
  const startedAt = new Date();
  const secrets = message.secrets ?? [];
  const result: SendResult =
    secrets.length === 0
      ? { status: null, retryAfter: null, excerpt: "no signing secret", latencyMs: 0 }
      : await sendWebhook(
          message.url,
          {
            "webhook-id": message.id,
            "webhook-timestamp": String(Math.floor(startedAt.getTime() / 1000)),
            "webhook-signature": signatureHeader(secrets, message.id, startedAt, body),
          },
          body,
          { policy: o.policy, timeoutMs: o.timeoutMs },
        );
  return recordAttempt(prisma, message, startedAt, result, o);
}

export interface DeliveryPass {
  claimed: number;
  outcomes: Record<Outcome, number>;
  more: boolean;
}

/** One pass: the due messages claimed, sent side by side, and their outcomes recorded. */
export async function deliverDueMessages(
  prisma: Db,
  overrides: Partial<DeliveryOptions> = {},
): Promise<DeliveryPass> {
  const o = deliveryOptions(overrides);
  const claimed = await claimDueMessages(prisma, o);
  const outcomes: Record<Outcome, number> = { succeeded: 0, retry: 0, failed: 0, gone: 0 };
  for (const outcome of await Promise.all(claimed.map((m) => deliverOne(prisma, m, o)))) outcomes[outcome]++;
  return { claimed: claimed.length, outcomes, more: claimed.length === o.batchSize };
}

export function startWebhookDelivery(prisma: Db, overrides: Partial<DeliveryOptions> = {}): Poller {
  const o = deliveryOptions(overrides);
  return startPoller("webhook delivery", async () => (await deliverDueMessages(prisma, o)).more, {
    idleMs: o.idleMs,
    maxBackoffMs: 30_000,
  });
}
