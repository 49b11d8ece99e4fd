import {
  countKeysByState as countKeys,
  findKey as findKeyRow,
  type KeyRef,
  type KeySummary,
  listKeys as listKeyRows,
} from "@idempotent-checkout/idempotency/admin";
import type { Db } from "../db";
import { keyDb } from "../keys";
import type { PaymentProvider } from "../provider";
import { refundView } from "../refunds";
import { decodeKeyCursor, encodeKeyCursor } from "./cursor";
import { paymentTrails } from "./payment-trail";
import type { TKeyDetail, TKeyPage, TKeyState, TKeySummary } from "./schemas";

export type { KeyRef };

export const countKeysByState = (prisma: Db) => countKeys(keyDb(prisma));
export const findKey = (prisma: Db, ref: KeyRef) => findKeyRow(keyDb(prisma), ref);

export interface KeyFilter {
  state?: TKeyState;
  accountId?: string;
  accountHandle?: string;
  /** A part of the key, case-insensitive. */
  search?: string;
  cursor?: string;
  limit: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function summaryView(r: KeySummary, handles: Map<string, string>): TKeySummary {
  return {
    id: String(r.id),
    accountId: r.accountId,
    accountHandle: handles.get(r.accountId) ?? "",
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

async function handlesOf(prisma: Db, accountIds: string[]): Promise<Map<string, string>> {
  const accounts = await prisma.account.findMany({
    where: { id: { in: [...new Set(accountIds)] } },
    select: { id: true, handle: true },
  });
  return new Map(accounts.map((a) => [a.id, a.handle]));
}

/** A page of keys, newest first, through the idempotency module's read API. */
export async function listKeys(prisma: Db, filter: KeyFilter): Promise<TKeyPage> {
  let accountIds = filter.accountId ? [filter.accountId] : undefined;
  if (filter.accountHandle) {
    const account = await prisma.account.findUnique({ where: { handle: filter.accountHandle } });
    accountIds = account && (!accountIds || accountIds.includes(account.id)) ? [account.id] : [];
  }
  const rows = await listKeyRows(keyDb(prisma), {
    state: filter.state,
    accountIds,
    search: filter.search,
    before: filter.cursor ? decodeKeyCursor(filter.cursor) : undefined,
    limit: filter.limit,
  });
  const page = rows.slice(0, filter.limit);
  const handles = await handlesOf(
    prisma,
    page.map((r) => r.accountId),
  );
  const last = page.at(-1);
  return {
    items: page.map((r) => summaryView(r, handles)),
    nextCursor: rows.length > filter.limit && last ? encodeKeyCursor({ id: last.id }) : null,
  };
}

/** One key with everything it led to: history, payment, provider charge and ledger entries. */
export async function getKeyDetail(
  prisma: Db,
  provider: Pick<PaymentProvider, "getCharge">,
  ref: KeyRef,
): Promise<TKeyDetail | null> {
  const key = await findKey(prisma, ref);
  if (!key) return null;
  const [handles, refund, action] = await Promise.all([
    handlesOf(prisma, [key.accountId]),
    prisma.refund.findUnique({ where: { idempotencyKeyId: key.id } }),
    prisma.authorizationAction.findUnique({ where: { idempotencyKeyId: key.id } }),
  ]);
  // A payment key's payment, or the payment a refund, capture or cancel key acted on.
  const actedOn = refund?.paymentId ?? action?.paymentId;
  const payment = actedOn
    ? await prisma.payment.findUnique({ where: { id: actedOn } })
    : await prisma.payment.findUnique({ where: { idempotencyKeyId: key.id } });
  const [trail] = payment ? await paymentTrails(prisma, provider, [payment]) : [];
  return {
    ...summaryView(key, handles),
    fingerprint: key.fingerprint,
    leaseSeconds: key.leaseSeconds,
    updatedAt: key.updatedAt.toISOString(),
    requestParams: key.requestParams,
    responseBody: key.responseBody,
    events: key.events.map((e) => ({
      id: String(e.id),
      kind: e.kind,
      fence: e.fence,
      detail: e.detail,
      at: e.at.toISOString(),
    })),
    payment: trail ?? null,
    refund: refund ? refundView(refund) : null,
    authorizationAction: action && {
      id: action.id,
      kind: action.kind as "capture" | "cancel",
      status: action.status,
      amountMinor: action.amountMinor,
      reason: action.reason,
      createdBy: action.createdBy,
      createdAt: action.createdAt.toISOString(),
    },
  };
}
