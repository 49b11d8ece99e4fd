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
    timeoutMs: env.WEBHOOK_TIMEOUT_SECONDS * 1000,
    // Past any attempt's timeout with room to record it: 60 s at the default 15 s.
    leaseSeconds: env.WEBHOOK_TIMEOUT_SECONDS * 4,
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
 * and the endpoint's run of failures (only while the claim is still this attempt's), and the
 * endpoint disabled on a 410 or after `disableAfterSeconds` of failures.
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
    // The message's change and the endpoint's run of failures go together, fenced by the claim:
    // a worker that outlived its lease changes neither. A 410 disables the endpoint whatever.
    outcome === "succeeded"
      ? prisma.$executeRaw`
          WITH settled AS (
            UPDATE webhook_messages SET status = 'succeeded', delivered_at = now()
             WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending'
            RETURNING endpoint_id)
          UPDATE webhook_endpoints SET failing_since = NULL
           WHERE id IN (SELECT endpoint_id FROM settled) AND failing_since IS NOT NULL`
      : outcome === "gone"
        ? prisma.$executeRaw`
            WITH failed AS (
              UPDATE webhook_messages SET status = 'failed'
               WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending')
            UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'gone'
             WHERE id = ${message.endpoint_id}::uuid AND disabled_at IS NULL`
        : prisma.$executeRaw`
            WITH changed AS (
              UPDATE webhook_messages
                 SET status = CASE WHEN ${outcome === "failed"} THEN 'failed' ELSE status END,
                     next_attempt_at = CASE WHEN ${outcome === "retry"}
                                            THEN now() + make_interval(secs => ${delay}::float8)
                                            ELSE next_attempt_at END
               WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending'
              RETURNING endpoint_id),
            since AS (
              SELECT e.id, coalesce(e.failing_since, ${startedAt}) AS failing_since,
                     e.disabled_at IS NULL
                       AND now() - coalesce(e.failing_since, ${startedAt})
                           >= make_interval(secs => ${o.disableAfterSeconds}::float8) AS disable
                FROM webhook_endpoints e WHERE e.id IN (SELECT endpoint_id FROM changed))
            UPDATE webhook_endpoints e
               SET failing_since = since.failing_since,
                   disabled_at = CASE WHEN since.disable THEN now() ELSE e.disabled_at END,
                   disabled_reason = CASE WHEN since.disable THEN 'failing' ELSE e.disabled_reason END
              FROM since WHERE e.id = since.id`,
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
