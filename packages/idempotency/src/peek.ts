import type { StoredResponse } from "./owner.js";
import { type Sql, sql } from "./sql.js";

/** A completed key, read ahead of the claim by a statement of the app's own. */
export interface PeekedKey {
  /** What it was read for: the middleware uses it only for this account and key. */
  accountId: string;
  key: string;
  id: bigint;
  fence: number;
  fingerprint: string;
  /** The stored response, parsed from its stored text (json, so in its stored key order). */
  response: StoredResponse;
}

/** A column for the app's statement, and how to read its value. */
export interface KeyPeek {
  /** A scalar subquery: json of the key when it is completed and not expired, else NULL. */
  column: Sql;
  read(value: unknown): PeekedKey | null;
}

/**
 * Reads a completed key inside a statement the request sends anyway, the one that resolves its
 * account (an API key's authentication, say): `accountId` is that statement's SQL for the
 * account's id. Handed to the middleware (`peeked`), a replay of a completed key then sends no
 * statement of the layer's own. A completed key never changes until it expires, so the stored
 * answer read a moment before the claim is the one the claim would have found.
 */
export function peekCompletedKey(accountId: Sql, key: string): KeyPeek {
  return {
    // Found by (account_id, key) alone, the unique index: state and expiry are read from the row,
    // never as a condition the planner could serve from the completed keys' expiry index (a
    // generic plan did, scanning every completed key: 0.28 ms per replay instead of 0.04).
    column: sql`(SELECT CASE WHEN k.state = 'completed' AND k.expires_at > now() THEN
                        json_build_object('accountId', k.account_id, 'key', k.key, 'id', k.id::text,
                          'fence', k.fence, 'fingerprint', k.fingerprint, 'response', k.response_body)
                        END
                   FROM idempotency_keys k
                  WHERE k.account_id = ${accountId} AND k.key = ${key})`,
    read: readPeekedKey,
  };
}

function readPeekedKey(value: unknown): PeekedKey | null {
  const v = (typeof value === "string" ? JSON.parse(value) : value) as Record<string, unknown> | null;
  if (!v || typeof v !== "object") return null;
  const { accountId, key, id, fence, fingerprint, response } = v;
  if (
    typeof accountId !== "string" ||
    typeof key !== "string" ||
    typeof id !== "string" ||
    typeof fence !== "number" ||
    typeof fingerprint !== "string" ||
    typeof response !== "object" ||
    response === null
  )
    return null;
  return { accountId, key, id: BigInt(id), fence, fingerprint, response: response as StoredResponse };
}
