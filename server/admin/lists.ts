import { empty, join, type Sql, sql } from "@idempotent-checkout/idempotency/sql";
import { z } from "zod";
import { type Db, rawQuery } from "../db";
import { domainErrors } from "../errors";

// The console's lists of orders, payments and refunds (decision 0201): newest first, a keyset
// cursor on (created_at, id), and each search a condition an index of its own serves, added only
// when asked for (no `$1 IS NULL OR …`, which keeps a generic plan from using any index).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const ZListSearch = z
  .object({
    /** An order, payment or refund id; a shopper's email (exact) or handle. */
    q: z.string().trim().max(254).optional(),
    status: z.string().trim().min(1).max(40).optional(),
    amountMinor: z.number().int().min(0).max(2_147_483_647).optional(),
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
    cursor: z.string().min(1).max(120).optional(),
    limit: z.number().int().min(1).max(100).default(25),
  })
  .prefault({});
export type TListSearch = z.output<typeof ZListSearch>;

const ZListed = {
  id: z.string(),
  email: z.string(),
  currency: z.string(),
  status: z.string(),
  createdAt: z.string(),
};
export const ZPaymentRow = z.object({
  ...ZListed,
  orderId: z.string(),
  amountMinor: z.number().int(),
  capturedMinor: z.number().int().nullable(),
  refundedMinor: z.number().int(),
});
export const ZOrderRow = z.object({ ...ZListed, totalMinor: z.number().int() });
export const ZRefundRow = z.object({
  ...ZListed,
  paymentId: z.string(),
  orderId: z.string(),
  amountMinor: z.number().int(),
  reason: z.string(),
  createdBy: z.string(),
});
const page = <T extends z.ZodType>(row: T) =>
  z.object({ rows: z.array(row), nextCursor: z.string().nullable() });
export const ZPaymentPage = page(ZPaymentRow);
export const ZOrderPage = page(ZOrderRow);
export const ZRefundPage = page(ZRefundRow);

interface Cursor {
  at: string;
  id: string;
}

/** Opaque to clients: base64url of `<created_at ISO>|<id>`. */
export function encodeListCursor(c: Cursor): string {
  return Buffer.from(`${c.at}|${c.id}`, "utf8").toString("base64url");
}

export function decodeListCursor(value: string): Cursor {
  const [at, id, ...rest] = Buffer.from(value, "base64url").toString("utf8").split("|");
  if (!at || !id || rest.length || !UUID.test(id) || Number.isNaN(Date.parse(at)))
    throw domainErrors.invalid("The cursor is not one this API returned.");
  return { at, id };
}

/** What `q` names: an id, or a shopper (by email or handle), each matched exactly. */
function searchTerm(q: string | undefined): { id: string } | { account: Sql } | null {
  if (!q) return null;
  if (UUID.test(q)) return { id: q.toLowerCase() };
  return q.includes("@")
    ? { account: sql`(SELECT id FROM accounts WHERE email = ${q.toLowerCase()})` }
    : { account: sql`(SELECT id FROM accounts WHERE handle = ${q})` };
}

interface Table {
  alias: Sql;
  /** The condition on the list's own id when `q` is an id (itself, or a related row's). */
  byId: (id: string) => Sql;
  amount: Sql;
}

function conditions(t: Table, input: TListSearch): Sql {
  const a = t.alias;
  const where: Sql[] = [];
  const term = searchTerm(input.q);
  if (term && "id" in term) where.push(t.byId(term.id));
  if (term && "account" in term) where.push(sql`${a}.account_id = ${term.account}`);
  if (input.status) where.push(sql`${a}.status = ${input.status}`);
  if (input.amountMinor !== undefined) where.push(sql`${t.amount} = ${input.amountMinor}`);
  if (input.from) where.push(sql`${a}.created_at >= ${new Date(input.from)}`);
  if (input.to) where.push(sql`${a}.created_at < ${new Date(input.to)}`);
  if (input.cursor) {
    const c = decodeListCursor(input.cursor);
    where.push(sql`(${a}.created_at, ${a}.id) < (${new Date(c.at)}, ${c.id}::uuid)`);
  }
  return where.length ? sql`WHERE ${join(where, " AND ")}` : empty;
}

function paged<T extends { id: string; createdAt: Date }>(rows: T[], limit: number) {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    shown,
    nextCursor:
      rows.length > limit && last
        ? encodeListCursor({ at: last.createdAt.toISOString(), id: last.id })
        : null,
  };
}

export function paymentsStatement(input: TListSearch): Sql {
  const p = sql`p`;
  return sql`
    SELECT p.id::text, p.order_id::text AS "orderId", a.email, p.amount_minor AS "amountMinor", p.currency,
           p.status, p.captured_minor AS "capturedMinor", p.created_at AS "createdAt",
           (SELECT coalesce(sum(r.amount_minor), 0)::int FROM refunds r
             WHERE r.payment_id = p.id AND r.status <> 'failed') AS "refundedMinor"
      FROM payments p JOIN accounts a ON a.id = p.account_id
      ${conditions({ alias: p, amount: sql`p.amount_minor`, byId: (id) => sql`(p.id = ${id}::uuid OR p.order_id = ${id}::uuid)` }, input)}
     ORDER BY p.created_at DESC, p.id DESC
     LIMIT ${input.limit + 1}`;
}

export function ordersStatement(input: TListSearch): Sql {
  const o = sql`o`;
  return sql`
    SELECT o.id::text, a.email, o.total_minor AS "totalMinor", o.currency, o.status, o.created_at AS "createdAt"
      FROM orders o JOIN accounts a ON a.id = o.account_id
      ${conditions(
        {
          alias: o,
          amount: sql`o.total_minor`,
          byId: (id) =>
            sql`o.id = coalesce((SELECT order_id FROM payments WHERE id = ${id}::uuid), ${id}::uuid)`,
        },
        input,
      )}
     ORDER BY o.created_at DESC, o.id DESC
     LIMIT ${input.limit + 1}`;
}

export function refundsStatement(input: TListSearch): Sql {
  const r = sql`r`;
  return sql`
    SELECT r.id::text, r.payment_id::text AS "paymentId", p.order_id::text AS "orderId", a.email,
           r.amount_minor AS "amountMinor", r.currency, r.status, r.reason, r.created_by AS "createdBy",
           r.created_at AS "createdAt"
      FROM refunds r JOIN payments p ON p.id = r.payment_id JOIN accounts a ON a.id = r.account_id
      ${conditions(
        {
          alias: r,
          amount: sql`r.amount_minor`,
          byId: (id) => sql`(r.id = ${id}::uuid OR r.payment_id = ${id}::uuid)`,
        },
        input,
      )}
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT ${input.limit + 1}`;
}

type Dated<T> = Omit<T, "createdAt"> & { createdAt: Date };

export async function listPayments(prisma: Db, input: TListSearch): Promise<z.output<typeof ZPaymentPage>> {
  const rows = await rawQuery<Dated<z.output<typeof ZPaymentRow>>>(prisma, paymentsStatement(input));
  const { shown, nextCursor } = paged(rows, input.limit);
  return { rows: shown.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })), nextCursor };
}

export async function listOrders(prisma: Db, input: TListSearch): Promise<z.output<typeof ZOrderPage>> {
  const rows = await rawQuery<Dated<z.output<typeof ZOrderRow>>>(prisma, ordersStatement(input));
  const { shown, nextCursor } = paged(rows, input.limit);
  return { rows: shown.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })), nextCursor };
}

export async function listRefunds(prisma: Db, input: TListSearch): Promise<z.output<typeof ZRefundPage>> {
  const rows = await rawQuery<Dated<z.output<typeof ZRefundRow>>>(prisma, refundsStatement(input));
  const { shown, nextCursor } = paged(rows, input.limit);
  return { rows: shown.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })), nextCursor };
}
