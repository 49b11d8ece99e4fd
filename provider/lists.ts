/**
 * Stripe's lists: newest first, `limit` (1-100, default 10), `starting_after=<id>` for the next
 * (older) page and `ending_before=<id>` for the previous (newer) one, `created` as an integer or a
 * hash of `gt`/`gte`/`lt`/`lte` (Unix seconds). Answers `{ object: "list", data, has_more, url }`.
 * Keyset pagination on (created, id): a page never skips or repeats an object that existed before
 * the walk began.
 */
import type { Pool } from "pg";
import type { Reply } from "./http";
import { ParamError, type Params } from "./params";
import { SCHEMA } from "./pg";

export interface PageParams {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
}

export interface ListPage {
  data: unknown[];
  hasMore: boolean;
}

export type ListTable = "payment_intents" | "refunds" | "events";

export function pageParams(params: Params): PageParams {
  const limit = params.integer("limit", { min: 1, max: 100 }) ?? 10;
  const startingAfter = params.string("starting_after");
  const endingBefore = params.string("ending_before");
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw new ParamError(
      "You may only specify one of these parameters: ending_before, starting_after.",
      "ending_before",
      "parameters_exclusive",
    );
  }
  return { limit, startingAfter, endingBefore };
}

/**
 * `created=<unix>` or `created[gte]=<unix>` …: a SQL condition on `created`, its values pushed.
 * Stripe's `created` is whole seconds, ours keeps milliseconds: each bound is moved to a second's
 * edge (`gt N` is `>= N+1`, `lte N` is `< N+1`), so the (created, id) index serves it.
 */
export function createdFilter(params: Params, values: unknown[]): string | null {
  if (!params.has("created")) return null;
  const bounds: Array<[">=" | "<", number]> = [];
  const hash = params.isHash("created") ? params.hash("created") : undefined;
  if (hash) {
    hash.only("gt", "gte", "lt", "lte");
    const gt = hash.integer("gt", { min: 0 });
    const gte = hash.integer("gte", { min: 0 });
    const lt = hash.integer("lt", { min: 0 });
    const lte = hash.integer("lte", { min: 0 });
    if (gt !== undefined) bounds.push([">=", gt + 1]);
    if (gte !== undefined) bounds.push([">=", gte]);
    if (lt !== undefined) bounds.push(["<", lt]);
    if (lte !== undefined) bounds.push(["<", lte + 1]);
  } else {
    const at = params.integer("created", { min: 0 }) as number;
    bounds.push([">=", at], ["<", at + 1]);
  }
  if (bounds.length === 0) return null;
  return bounds
    .map(([op, seconds]) => {
      values.push(new Date(seconds * 1000));
      return `created ${op} $${values.length}::timestamptz`;
    })
    .join(" AND ");
}

/**
 * One page of `table` under `where`. The cursor must name an object of the table (404
 * `resource_missing` otherwise); `ending_before` reads the newer neighbours and answers them newest
 * first, as Stripe's.
 */
export async function listPage(
  pool: Pool,
  q: { table: ListTable; noun: string; where: string[]; values: unknown[] },
  page: PageParams,
): Promise<ListPage> {
  const values = [...q.values];
  const where = [...q.where];
  const cursorId = page.startingAfter ?? page.endingBefore;
  if (cursorId !== undefined) {
    const cursor = await pool.query(`SELECT 1 FROM ${SCHEMA}.${q.table} WHERE id = $1`, [cursorId]);
    if (cursor.rowCount === 0) {
      throw new ParamError(
        `No such ${q.noun}: '${cursorId}'`,
        page.startingAfter !== undefined ? "starting_after" : "ending_before",
        "resource_missing",
        404,
      );
    }
    values.push(cursorId);
    const op = page.startingAfter !== undefined ? "<" : ">";
    where.push(
      `(created, id) ${op} (SELECT c.created, c.id FROM ${SCHEMA}.${q.table} c WHERE c.id = $${values.length})`,
    );
  }
  const backwards = page.endingBefore !== undefined;
  values.push(page.limit + 1);
  const result = await pool.query<{ object: unknown }>(
    `SELECT object FROM ${SCHEMA}.${q.table}
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created ${backwards ? "ASC" : "DESC"}, id ${backwards ? "ASC" : "DESC"}
      LIMIT $${values.length}`,
    values,
  );
  const rows = result.rows.slice(0, page.limit).map((r) => r.object);
  return { data: backwards ? rows.reverse() : rows, hasMore: result.rows.length > page.limit };
}

export function listReply(url: string, page: ListPage): Reply {
  return { status: 200, body: { object: "list", data: page.data, has_more: page.hasMore, url } };
}
