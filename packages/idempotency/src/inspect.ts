import type { KeyDb } from "./db.js";
import { KEY_STATES, type KeyState, keyStateCondition, keyStateSql } from "./key-states.js";
import { empty, join, type Sql, sql } from "./sql.js";

/**
 * The read side of the key table, for consoles and metrics: lists, one key with its history,
 * counts by state. The states are the ones key-states.ts defines; nothing outside this module
 * reads the key tables.
 */
export interface KeySummary {
  id: bigint;
  accountId: string;
  key: string;
  procedure: string;
  state: KeyState;
  recoveryPoint: string;
  responseStatus: number | null;
  attempts: number;
  completerAttempts: number;
  lastError: string | null;
  fence: number;
  lockedUntil: Date | null;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
}

export interface KeyEvent {
  id: bigint;
  kind: string;
  fence: number;
  detail: string | null;
  at: Date;
}

export interface KeyDetail extends KeySummary {
  fingerprint: string;
  leaseSeconds: number;
  updatedAt: Date;
  requestParams: unknown;
  /** Parsed from the stored text, so its key order is the replay's. */
  responseBody: unknown;
  events: KeyEvent[];
}

export interface KeyListFilter {
  state?: KeyState;
  accountIds?: string[];
  /** A part of the key, case-insensitive. */
  search?: string;
  /** Keyset pagination, newest first: only keys older than this one. */
  /** Keys older than this one (smaller ids). */
  before?: { id: bigint };
  limit: number;
}

const summaryColumns = sql`
  k.id, k.account_id::text AS "accountId", k.key, k.procedure, ${keyStateSql} AS state,
  k.recovery_point AS "recoveryPoint", k.response_status AS "responseStatus", k.attempts,
  k.completer_attempts AS "completerAttempts", k.last_error AS "lastError", k.fence,
  k.locked_until AS "lockedUntil", k.created_at AS "createdAt", k.completed_at AS "completedAt",
  k.expires_at AS "expiresAt"`;

const escapeLike = (s: string) => s.replace(/[\\%_]/g, "\\$&");

/**
 * Keys newest first, by keyset pagination on the id (handed out in claim order, so it orders keys
 * as their creation does, without an index of its own): a page is "older than the last row seen",
 * so keys arriving meanwhile never shift or repeat what comes next.
 * Returns one row more than the limit when there is a next page.
 */
export async function listKeys(db: KeyDb<unknown>, filter: KeyListFilter): Promise<KeySummary[]> {
  const conditions: Sql[] = [];
  if (filter.state) conditions.push(keyStateCondition(filter.state));
  if (filter.accountIds) conditions.push(sql`k.account_id = ANY(${filter.accountIds}::uuid[])`);
  if (filter.search) conditions.push(sql`k.key ILIKE ${`%${escapeLike(filter.search)}%`}`);
  if (filter.before) {
    conditions.push(sql`k.id < ${String(filter.before.id)}::bigint`);
  }
  const where = conditions.length > 0 ? sql`WHERE ${join(conditions, " AND ")}` : empty;
  const rows = await db.query<KeySummary>(sql`
    SELECT ${summaryColumns} FROM idempotency_keys k ${where}
     ORDER BY k.id DESC
     LIMIT ${filter.limit + 1}`);
  return rows.map((r) => ({ ...r, id: BigInt(r.id) }));
}

export type KeyRef = { id: bigint } | { accountId: string; key: string };

/** One key with its history, or null. */
export async function findKey(db: KeyDb<unknown>, ref: KeyRef): Promise<KeyDetail | null> {
  const match =
    "id" in ref
      ? sql`k.id = ${String(ref.id)}::bigint`
      : sql`k.account_id = ${ref.accountId}::uuid AND k.key = ${ref.key}`;
  // The bodies as text: the stored response is json, not jsonb, and its key order is the replay's.
  const [row] = await db.query<
    KeySummary & {
      fingerprint: string;
      leaseSeconds: number;
      updatedAt: Date;
      params: string;
      body: string | null;
    }
  >(sql`
    SELECT ${summaryColumns}, k.fingerprint, k.lease_seconds AS "leaseSeconds", k.updated_at AS "updatedAt",
           k.request_params::text AS params, k.response_body::text AS body
      FROM idempotency_keys k WHERE ${match}`);
  if (!row) return null;
  const events = await keyHistory(db, row.id);
  const { params, body, ...rest } = row;
  return {
    ...rest,
    id: BigInt(rest.id),
    requestParams: JSON.parse(params) as unknown,
    responseBody: body === null ? null : (JSON.parse(body) as unknown),
    events,
  };
}

/**
 * A key's history, oldest first: its ordinary life read from the row (claimed, the first phase
 * with the claim, completed) and the unusual events stored beside it (decision 0105). Derived
 * lines have negative ids.
 */
export async function keyHistory(db: KeyDb<unknown>, keyId: bigint): Promise<KeyEvent[]> {
  const events = await db.query<KeyEvent>(sql`
    SELECT id, kind, fence, detail, at FROM idempotency_key_history WHERE key_id = ${keyId} ORDER BY at, seq`);
  return events.map((e) => ({ ...e, id: BigInt(e.id) }));
}

/** How many keys are in each state. */
export async function countKeysByState(db: KeyDb<unknown>): Promise<Record<KeyState, number>> {
  const rows = await db.query<{ state: KeyState; n: bigint | string }>(sql`
    SELECT ${keyStateSql} AS state, count(*)::bigint AS n FROM idempotency_keys k GROUP BY 1`);
  const counts = Object.fromEntries(KEY_STATES.map((s) => [s, 0])) as Record<KeyState, number>;
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}
