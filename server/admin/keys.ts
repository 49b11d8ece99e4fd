import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import { KEY_STATES, keyStateCondition, keyStateSql } from "../idempotency";
import type { PaymentProvider } from "../payments/provider";
import { decodeKeyCursor, encodeKeyCursor } from "./cursor";
import { paymentTrails } from "./payment-trail";
import type { TKeyDetail, TKeyPage, TKeyState, TKeySummary } from "./schemas";

export interface KeyFilter {
  state?: TKeyState;
  accountId?: string;
  accountHandle?: string;
  /** A part of the key, case-insensitive. */
  search?: string;
  cursor?: string;
  limit: number;
}

export type KeyRef = { id: bigint } | { accountId: string; key: string };

interface SummaryRow {
  id: bigint;
  accountId: string;
  accountHandle: string;
  key: string;
  procedure: string;
  state: TKeyState;
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

const summaryColumns = Prisma.sql`
  k.id, k.account_id::text AS "accountId", a.handle AS "accountHandle", k.key, k.procedure,
  ${keyStateSql} AS state, k.recovery_point AS "recoveryPoint", k.response_status AS "responseStatus",
  k.attempts, k.completer_attempts AS "completerAttempts", k.last_error AS "lastError", k.fence, k.locked_until AS "lockedUntil", k.created_at AS "createdAt",
  k.completed_at AS "completedAt", k.expires_at AS "expiresAt"`;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function summaryView(r: SummaryRow): TKeySummary {
  return {
    id: String(r.id),
    accountId: r.accountId,
    accountHandle: r.accountHandle,
    key: r.key,
    procedure: r.procedure,
    state: r.state,
    recoveryPoint: r.recoveryPoint,
    responseStatus: r.responseStatus,
    attempts: r.attempts,
    completerAttempts: r.completerAttempts,
    lastError: r.lastError,
    fence: r.fence,
    lockedUntil: iso(r.lockedUntil),
    createdAt: r.createdAt.toISOString(),
    completedAt: iso(r.completedAt),
    expiresAt: r.expiresAt.toISOString(),
  };
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, "\\$&");

/**
 * Keys newest first, by keyset pagination on (created_at desc, id desc): a page is "older than
 * the last row seen", so keys arriving meanwhile never shift or repeat what comes next.
 */
export async function listKeys(prisma: Db, filter: KeyFilter): Promise<TKeyPage> {
  const conditions: Prisma.Sql[] = [];
  if (filter.state) conditions.push(keyStateCondition(filter.state));
  if (filter.accountId) conditions.push(Prisma.sql`k.account_id = ${filter.accountId}::uuid`);
  if (filter.accountHandle) conditions.push(Prisma.sql`a.handle = ${filter.accountHandle}`);
  if (filter.search) conditions.push(Prisma.sql`k.key ILIKE ${`%${escapeLike(filter.search)}%`}`);
  if (filter.cursor) {
    const after = decodeKeyCursor(filter.cursor);
    conditions.push(
      Prisma.sql`(k.created_at, k.id) < (${after.createdAt.toISOString()}::timestamptz, ${String(after.id)}::bigint)`,
    );
  }
  const where = conditions.length > 0 ? Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}` : Prisma.empty;
  const rows = await prisma.$queryRaw<SummaryRow[]>`
    SELECT ${summaryColumns}
      FROM idempotency_keys k JOIN accounts a ON a.id = k.account_id
      ${where}
     ORDER BY k.created_at DESC, k.id DESC
     LIMIT ${filter.limit + 1}`;
  const page = rows.slice(0, filter.limit);
  const last = page.at(-1);
  return {
    items: page.map(summaryView),
    nextCursor:
      rows.length > filter.limit && last ? encodeKeyCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}

interface DetailRow extends SummaryRow {
  fingerprint: string;
  leaseSeconds: number;
  updatedAt: Date;
  requestParams: string;
  responseBody: string | null;
}

/** One key with everything it led to: history, payment, provider charge and ledger entries. */
export async function getKeyDetail(
  prisma: Db,
  provider: Pick<PaymentProvider, "getCharge">,
  ref: KeyRef,
): Promise<TKeyDetail | null> {
  const match =
    "id" in ref
      ? Prisma.sql`k.id = ${String(ref.id)}::bigint`
      : Prisma.sql`k.account_id = ${ref.accountId}::uuid AND k.key = ${ref.key}`;
  // The bodies as text: the stored response is json, not jsonb, and its key order is the replay's.
  const [row] = await prisma.$queryRaw<DetailRow[]>`
    SELECT ${summaryColumns}, k.fingerprint, k.lease_seconds AS "leaseSeconds", k.updated_at AS "updatedAt",
           k.request_params::text AS "requestParams", k.response_body::text AS "responseBody"
      FROM idempotency_keys k JOIN accounts a ON a.id = k.account_id
     WHERE ${match}`;
  if (!row) return null;
  const [events, payment] = await Promise.all([
    prisma.idempotencyEvent.findMany({ where: { keyId: row.id }, orderBy: [{ at: "asc" }, { id: "asc" }] }),
    prisma.payment.findUnique({ where: { idempotencyKeyId: row.id } }),
  ]);
  const [trail] = payment ? await paymentTrails(prisma, provider, [payment]) : [];
  return {
    ...summaryView(row),
    fingerprint: row.fingerprint,
    leaseSeconds: row.leaseSeconds,
    updatedAt: row.updatedAt.toISOString(),
    requestParams: JSON.parse(row.requestParams) as unknown,
    responseBody: row.responseBody === null ? null : (JSON.parse(row.responseBody) as unknown),
    events: events.map((e) => ({
      id: String(e.id),
      kind: e.kind,
      fence: e.fence,
      detail: e.detail,
      at: e.at.toISOString(),
    })),
    payment: trail ?? null,
  };
}

/** How many keys are in each display state, for the overview and the metrics gauges. */
export async function countKeysByState(prisma: Db): Promise<Record<TKeyState, number>> {
  const rows = await prisma.$queryRaw<{ state: TKeyState; n: bigint }[]>`
    SELECT ${keyStateSql} AS state, count(*)::bigint AS n FROM idempotency_keys k GROUP BY 1`;
  const counts = Object.fromEntries(KEY_STATES.map((s) => [s, 0])) as Record<TKeyState, number>;
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}
