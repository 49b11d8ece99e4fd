/**
 * What the provider's stores share: the schema name, the transaction wrapper, advisory-lock
 * keys, time-ordered ids and the errors they raise.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Pool, PoolClient } from "pg";

export const SCHEMA = "payment_provider";

export class UnknownCursorError extends Error {
  override name = "UnknownCursorError";
  readonly code = UNKNOWN_CURSOR;
}

const UNKNOWN_CURSOR = "unknown_cursor";

/** An UnknownCursorError from any copy of this module: told by its code, not class identity. */
export function isUnknownCursor(error: unknown): error is UnknownCursorError {
  return (error as { code?: unknown } | null)?.code === UNKNOWN_CURSOR;
}

/** The filters every list takes (charges and refunds). */
export interface ListFilters {
  limit: number;
  startingAfter?: string;
  createdGte?: Date;
  idempotencyKey?: string;
  /** Rows whose metadata holds all of these pairs. */
  metadata?: Record<string, string>;
}

/**
 * One page of `table` by keyset pagination ordered by (created_at, id), the rows read as `columns`;
 * `charge` narrows refunds to one charge's. Throws UnknownCursorError for a bad `startingAfter`.
 */
export async function readPage<Row extends object>(
  pool: Pool,
  table: "charges" | "refunds",
  columns: string,
  opts: ListFilters & { charge?: string },
): Promise<{ rows: Row[]; hasMore: boolean }> {
  if (opts.startingAfter !== undefined) {
    const cursor = await pool.query(`SELECT 1 FROM ${SCHEMA}.${table} WHERE id = $1`, [opts.startingAfter]);
    const noun = table === "charges" ? "charge" : "refund";
    if (cursor.rowCount === 0) throw new UnknownCursorError(`No such ${noun}: ${opts.startingAfter}`);
  }
  const byCharge = table === "refunds" ? "AND ($6::text IS NULL OR charge_id = $6::text)" : "";
  const result = await pool.query<Row>(
    `SELECT ${columns} FROM ${SCHEMA}.${table}
     WHERE ($1::timestamptz IS NULL OR created_at >= $1::timestamptz)
       AND ($2::text IS NULL OR idempotency_key = $2::text)
       AND ($3::text IS NULL OR (created_at, id) > (SELECT t.created_at, t.id FROM ${SCHEMA}.${table} t WHERE t.id = $3::text))
       AND ($5::jsonb IS NULL OR metadata @> $5::jsonb)
       ${byCharge}
     ORDER BY created_at, id
     LIMIT $4`,
    [
      opts.createdGte ?? null,
      opts.idempotencyKey ?? null,
      opts.startingAfter ?? null,
      opts.limit + 1,
      opts.metadata ? JSON.stringify(opts.metadata) : null,
      ...(table === "refunds" ? [opts.charge ?? null] : []),
    ],
  );
  return { rows: result.rows.slice(0, opts.limit), hasMore: result.rows.length > opts.limit };
}

/** A bigint advisory-lock key derived from a name (64 bits of sha256). */
export function advisoryLockId(name: string): string {
  return createHash("sha256").update(name).digest().readBigInt64BE(0).toString();
}

/**
 * `<prefix>_` and 24 hex digits: the millisecond clock first, then 48 random bits, so new rows land
 * at the right edge of the id indexes (here and in the shop's tables) rather than on random pages.
 */
export function timeOrderedId(prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, "0")}${randomBytes(6).toString("hex")}`;
}

/**
 * Runs `work` in a READ COMMITTED transaction: advisory locks its statements take are held to
 * COMMIT. A connection whose transaction could not end is dropped, not pooled.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // The server may end the connection between two statements (a restart, an admin's terminate):
  // pg then emits "error" on the checked-out client, which would end the process unheard.
  // The next statement fails on its own; the client is dropped, not pooled.
  const onError = (err: Error) => {
    broken = err;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch (rollbackErr) {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    }
    throw err;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}
