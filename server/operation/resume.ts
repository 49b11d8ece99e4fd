import { raw, type Sql, sql } from "@idempotent-checkout/idempotency/sql";
import { type Db, rawQuery } from "../db";
import type { RequestMark } from "./provider-call";

/**
 * Whether an operation's row (aliased `alias`) may be abandoned now: still pending, no request for
 * it ever left (its mark is null), and older than `abandonAfterSeconds` (none given: never), all by
 * the database's clock. A row whose request may be out is never abandoned; it is re-sent.
 */
function abandonable(alias: string, mark: RequestMark, abandonAfterSeconds: number | undefined): Sql {
  const row = raw(alias);
  return sql`(${abandonAfterSeconds ?? null}::int IS NOT NULL AND ${row}.status = 'pending'
    AND ${row}.${raw(mark.column)} IS NULL
    AND ${row}.created_at <= now() - make_interval(secs => coalesce(${abandonAfterSeconds ?? null}::int, 0)))`;
}

/** Where an operation's rows are read from: its columns and FROM clause, its row's alias and mark. */
export interface OperationRows {
  columns: Sql;
  from: Sql;
  alias: string;
  mark: RequestMark;
}

/**
 * The row an earlier attempt of key `keyId` created, and whether it may be abandoned now (no
 * request ever left, older than `abandonAfterSeconds`): how a resumed attempt starts.
 */
export async function resumeRow<TRow>(
  prisma: Db,
  rows: OperationRows,
  keyId: bigint,
  abandonAfterSeconds: number | undefined,
): Promise<{ row: TRow; abandonable: boolean }> {
  const [found] = await rawQuery<TRow & { abandonable: boolean }>(
    prisma,
    sql`SELECT ${rows.columns}, ${abandonable(rows.alias, rows.mark, abandonAfterSeconds)} AS abandonable
          FROM ${rows.from} WHERE ${raw(rows.alias)}.idempotency_key_id = ${keyId}`,
  );
  if (!found) throw new Error(`no ${rows.mark.table} row for idempotency key ${keyId}`);
  return { row: found, abandonable: found.abandonable };
}
