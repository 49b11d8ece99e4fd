/**
 * Stripe's idempotent requests (docs.stripe.com/api/idempotent_requests), for every POST:
 *
 * - a request carrying `Idempotency-Key` runs in one transaction that first takes the key's
 *   advisory lock without waiting: another request holding it right now gets 409
 *   `idempotency_key_in_use` (Stripe-Should-Retry: true) and nothing is done;
 * - a key past retention (24 h, as Stripe) is forgotten, and the request runs as new;
 * - a key seen before replays its stored status and body byte for byte with
 *   `Idempotent-Replayed: true` when the method, path and parameters are the same, and answers 400
 *   `idempotency_error` when they differ;
 * - otherwise the work runs in the same transaction and its answer (a 402 decline or a 4xx of a
 *   request that began executing included) is stored with the key, so the changes, their events
 *   and the key commit together or not at all. Requests refused by parameter validation never get
 *   here and store nothing, as Stripe's.
 *
 * The key row's primary key backs the lock up: a duplicate that got past it is refused whole and
 * answered 409 too.
 */
import { createHash } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { canonicalForm, type FormObject } from "./form";
import { type Reply, stripeError } from "./http";
import { advisoryLockId, inTransaction, isUniqueViolation, SCHEMA } from "./pg";

export interface IdempotentRequest {
  key: string | undefined;
  method: string;
  path: string;
  params: FormObject;
  /** Keys older than this are forgotten (default: kept forever). */
  retentionSeconds?: number;
}

export const MAX_KEY_LENGTH = 255;

/** What a request did: its answer, and what to run once it committed (event delivery). */
export interface Outcome {
  reply: Reply;
  afterCommit?: () => void;
}

export function keyInUse(key: string): Reply {
  return {
    ...stripeError(
      409,
      "invalid_request_error",
      "There is currently another in-progress request using this Idempotent Key (probably a retry of a request " +
        `that failed the first time: '${key}'). Please try again later.`,
      { code: "idempotency_key_in_use" },
    ),
    headers: { "retry-after": "1" },
  };
}

function keyReused(key: string): Reply {
  return stripeError(
    400,
    "idempotency_error",
    "Keys for idempotent requests can only be used with the same parameters they were first used with. " +
      `Try using a key other than '${key}' if you meant to execute a different request.`,
  );
}

function fingerprintOf(req: IdempotentRequest): string {
  return createHash("sha256")
    .update(`${req.method} ${req.path} ${canonicalForm(req.params)}`)
    .digest("hex");
}

/** Runs `work` once per key (see the file's comment); without a key, simply in a transaction. */
export async function runIdempotent(
  pool: Pool,
  req: IdempotentRequest,
  work: (client: PoolClient) => Promise<Outcome>,
): Promise<Outcome> {
  const key = req.key;
  if (key === undefined) return inTransaction(pool, work);
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    return {
      reply: stripeError(
        400,
        "invalid_request_error",
        `Invalid Idempotency-Key: it must be 1 to ${MAX_KEY_LENGTH} characters.`,
        { param: "Idempotency-Key" },
      ),
    };
  }
  const fingerprint = fingerprintOf(req);
  try {
    return await inTransaction(pool, async (client) => {
      const lock = await client.query<{ held: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS held", [
        advisoryLockId(`${SCHEMA}/idempotency/${key}`),
      ]);
      if (!lock.rows[0]?.held) return { reply: keyInUse(key) };
      // A new snapshot per statement (READ COMMITTED): this sees what the lock's last holder committed.
      const found = await client.query<{
        fingerprint: string;
        response_status: number;
        response_body: unknown;
      }>(
        `WITH forgotten AS (
           DELETE FROM ${SCHEMA}.idempotent_requests
            WHERE key = $1 AND $2::int IS NOT NULL AND created_at <= clock_timestamp() - make_interval(secs => $2::int)
           RETURNING key)
         SELECT fingerprint, response_status, response_body FROM ${SCHEMA}.idempotent_requests
          WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM forgotten)`,
        [key, req.retentionSeconds ?? null],
      );
      const stored = found.rows[0];
      if (stored) {
        if (stored.fingerprint !== fingerprint) return { reply: keyReused(key) };
        return {
          reply: {
            status: stored.response_status,
            body: stored.response_body,
            headers: { "idempotent-replayed": "true" },
          },
        };
      }
      const outcome = await work(client);
      await client.query(
        `INSERT INTO ${SCHEMA}.idempotent_requests (key, fingerprint, response_status, response_body)
         VALUES ($1, $2, $3, $4::json)`,
        [key, fingerprint, outcome.reply.status, JSON.stringify(outcome.reply.body)],
      );
      return outcome;
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { reply: keyInUse(key) };
    throw err;
  }
}
