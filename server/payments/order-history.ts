import type { Db } from "../db";
import { domainErrors } from "../errors";

/** The newest first; a page is at most this many orders. */
export const ORDER_HISTORY_MAX_PAGE = 50;

export interface OrderHistoryEntry {
  id: string;
  createdAt: Date;
  /** pending_payment | authorized | paid */
  status: string;
  /** The latest payment attempt's status, or null before any. */
  paymentStatus: string | null;
  totalMinor: number;
  currency: string;
  itemCount: number;
}

export interface OrderHistoryPage {
  orders: OrderHistoryEntry[];
  /** Pass back to read the next (older) page; null on the last one. */
  nextCursor: string | null;
}

/**
 * One page of an account's orders, newest first, by keyset on (created_at, id): the cursor is
 * the last order's position, so a page costs the same however deep it is, and orders placed
 * while paging never shift or repeat the next page. Reads the (account_id, created_at) index.
 */
export async function listOrdersOfAccount(
  prisma: Db,
  accountId: string,
  { limit, cursor }: { limit: number; cursor?: string | null | undefined },
): Promise<OrderHistoryPage> {
  const take = Math.min(Math.max(1, Math.trunc(limit)), ORDER_HISTORY_MAX_PAGE);
  const after = cursor ? decodeCursor(cursor) : null;
  const rows = await prisma.order.findMany({
    where: {
      accountId,
      ...(after && {
        OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
      }),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: take + 1,
    select: {
      id: true,
      createdAt: true,
      status: true,
      totalMinor: true,
      currency: true,
      payments: { select: { status: true }, orderBy: { createdAt: "desc" }, take: 1 },
      _count: { select: { items: true } },
    },
  });
  const page = rows.slice(0, take);
  const last = page.at(-1);
  return {
    orders: page.map((o) => ({
      id: o.id,
      createdAt: o.createdAt,
      status: o.status,
      paymentStatus: o.payments[0]?.status ?? null,
      totalMinor: o.totalMinor,
      currency: o.currency,
      itemCount: o._count.items,
    })),
    nextCursor: rows.length > take && last ? encodeCursor(last) : null,
  };
}

function encodeCursor(order: { createdAt: Date; id: string }): string {
  return Buffer.from(`${order.createdAt.toISOString()}|${order.id}`).toString("base64url");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString().split("|");
  const createdAt = new Date(at ?? "");
  if (!id || !UUID.test(id) || Number.isNaN(createdAt.getTime()))
    throw domainErrors.invalid("The order history cursor is not one this server gave.");
  return { createdAt, id };
}
