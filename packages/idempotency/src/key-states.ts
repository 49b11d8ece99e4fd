import { type Sql, sql } from "./sql.js";

/**
 * The display states of a key, defined here once (the admin, the metrics and the completer read
 * them through this module):
 * - in_progress: an attempt holds a live lease;
 * - needs_attention: unfinished past its first recovery point (money may have moved), and the
 *   completer has failed on it NEEDS_ATTENTION.completerAttempts times or it is older than
 *   NEEDS_ATTENTION.ageSeconds: a person should look, and may re-drive it;
 * - abandoned: unfinished, no live lease, waiting for a retry or the completer;
 * - completed: answered, its response replayed until it expires;
 * - expired: completed and past its replay window (the sweep deletes it; a reuse is a new request).
 * An unfinished key is never shown as expired, however old: its work is not done.
 */
export const KEY_STATES = ["in_progress", "needs_attention", "abandoned", "completed", "expired"] as const;
export type KeyState = (typeof KEY_STATES)[number];

export const NEEDS_ATTENTION = { completerAttempts: 5, ageSeconds: 3600 } as const;

const needsAttention = sql`(k.recovery_point <> 'started'
  AND (k.completer_attempts >= ${NEEDS_ATTENTION.completerAttempts}
       OR k.created_at <= now() - make_interval(secs => ${NEEDS_ATTENTION.ageSeconds})))`;
const leaseLive = sql`coalesce(k.locked_until > now(), false)`;

/** The display state of the key row aliased `k`, by the database clock. */
export const keyStateSql = sql`CASE
  WHEN k.state = 'completed' THEN CASE WHEN k.expires_at <= now() THEN 'expired' ELSE 'completed' END
  WHEN ${leaseLive} THEN 'in_progress'
  WHEN ${needsAttention} THEN 'needs_attention'
  ELSE 'abandoned' END`;

/** The same states as WHERE conditions on the row aliased `k`. */
export function keyStateCondition(state: KeyState): Sql {
  switch (state) {
    case "expired":
      return sql`k.state = 'completed' AND k.expires_at <= now()`;
    case "completed":
      return sql`k.state = 'completed' AND k.expires_at > now()`;
    case "in_progress":
      return sql`k.state = 'in_progress' AND k.locked_until > now()`;
    case "needs_attention":
      return sql`k.state = 'in_progress' AND NOT ${leaseLive} AND ${needsAttention}`;
    case "abandoned":
      return sql`k.state = 'in_progress' AND NOT ${leaseLive} AND NOT ${needsAttention}`;
  }
}
