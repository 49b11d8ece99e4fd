import type { Statement } from "./sql.js";

/**
 * What the layer needs of the database: any tRPC + Prisma or node-postgres app can supply it
 * (docs in the README). `TTx` is the app's own transaction handle (Prisma's transaction client, a
 * node-postgres client): the layer passes it to the handler's phases untouched.
 *
 * Rows come back as the driver parses them; an int8 may be a bigint or a string (the layer reads
 * ids with BigInt()). Errors must keep the driver's SQLSTATE in `code` (and, where the driver has
 * it, `constraint` and `detail`), on the error or on an error it wraps as `cause`.
 */
export interface KeyDb<TTx = unknown> {
  /** One statement in its own (auto-committed) transaction: the rows it returns. */
  query<T>(statement: Statement): Promise<T[]>;
  /** One statement in its own transaction: the number of rows it wrote. */
  execute(statement: Statement): Promise<number>;
  /** Runs `fn` in one transaction, committed when it resolves and rolled back when it throws. */
  transaction<R>(fn: (tx: TTx) => Promise<R>, options: { timeoutMs: number }): Promise<R>;
  /** One statement inside the transaction `tx`: the rows it returns. */
  queryIn<T>(tx: TTx, statement: Statement): Promise<T[]>;
}

/** What the node-postgres adapter needs of a `pg.Client` (or a pool's client). */
export interface PgClientLike {
  query(config: { text: string; values?: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}
/** What the node-postgres adapter needs of a `pg.Pool`. */
export interface PgPoolLike extends PgClientLike {
  connect(): Promise<PgClientLike & { release(error?: Error | boolean): void }>;
}

/**
 * The layer's database on a node-postgres pool; the handler's phases get a pool client in a
 * transaction. `timeoutMs` bounds the transaction from the server's side
 * (`SET LOCAL idle_in_transaction_session_timeout`).
 */
export function nodePostgresKeyDb(pool: PgPoolLike): KeyDb<PgClientLike> {
  const run = (c: PgClientLike, s: Statement) => c.query({ text: s.text, values: [...s.values] });
  return {
    query: async <T>(s: Statement) => (await run(pool, s)).rows as T[],
    execute: async (s) => (await run(pool, s)).rowCount ?? 0,
    queryIn: async <T>(tx: PgClientLike, s: Statement) => (await run(tx, s)).rows as T[],
    async transaction(fn, { timeoutMs }) {
      const client = await pool.connect();
      try {
        await client.query({ text: "BEGIN" });
        await client.query({
          text: `SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, Math.floor(timeoutMs))}`,
        });
        const result = await fn(client);
        await client.query({ text: "COMMIT" });
        client.release();
        return result;
      } catch (error) {
        // A connection that cannot even roll back is not given back to the pool.
        const rolledBack = await client.query({ text: "ROLLBACK" }).then(
          () => true,
          () => false,
        );
        client.release(!rolledBack);
        throw error;
      }
    },
  };
}
