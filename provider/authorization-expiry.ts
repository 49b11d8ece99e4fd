/**
 * Authorizations that are never captured expire, as Stripe cancels an uncaptured PaymentIntent
 * after 7 days (cancellation_reason "automatic", event payment_intent.canceled). Off unless
 * PROVIDER_AUTHORIZATION_TTL_SECONDS is set: tests and chaos compress the 7 days to seconds.
 * The deadline is the charge's `payment_method_details.card.capture_before`, set when the card was
 * authorized (for a 3-D Secure payment, when the challenge was completed) by the TTL of the
 * process that authorized it: a sweeping process never shortens another's authorizations, which
 * keep Stripe's 7 days. Several processes may sweep one store: rows are claimed with SKIP LOCKED
 * and each is canceled in the transaction that locked it, so once.
 */
import type { Pool } from "pg";
import type { EventRecorder } from "./events";
import { cancelAndStore } from "./intent-store";
import type { PaymentIntent } from "./objects";
import { inTransaction, SCHEMA } from "./pg";

const BATCH = 100;

export interface AuthorizationExpiry {
  stop(): Promise<void>;
}

export function startAuthorizationExpiry(opts: {
  pool: Pool;
  ttlSeconds: number;
  recorder: EventRecorder;
  /** After a sweep that canceled any: webhook delivery's nudge. */
  notify?: () => void;
  onError: (err: unknown) => void;
}): AuthorizationExpiry {
  // A quarter of the TTL, so an authorization outlives its deadline by at most that (0.2 s to 1 min).
  const everyMs = Math.min(Math.max(opts.ttlSeconds * 250, 200), 60_000);
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(async () => {
        if ((await expireAuthorizations(opts.pool, opts.recorder)) > 0) opts.notify?.();
      })
      .catch(opts.onError);
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** Cancels up to a batch of authorizations past their capture_before; returns how many. */
export async function expireAuthorizations(pool: Pool, recorder: EventRecorder): Promise<number> {
  return inTransaction(pool, async (client) => {
    const due = await client.query<{ object: PaymentIntent }>(
      `SELECT p.object FROM ${SCHEMA}.payment_intents p
         JOIN ${SCHEMA}.charges c ON c.id = p.object->>'latest_charge'
        WHERE p.status = 'requires_capture'
          AND (c.object #>> '{payment_method_details,card,capture_before}')::bigint <= extract(epoch FROM now())
        ORDER BY c.created
        LIMIT ${BATCH}
          FOR UPDATE OF p SKIP LOCKED`,
    );
    for (const { object } of due.rows)
      await cancelAndStore(client, object, "automatic", { id: null, idempotencyKey: null }, recorder);
    return due.rowCount ?? 0;
  });
}
