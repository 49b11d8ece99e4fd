import type { IntentStore, StoredIntent } from "../intents.js";

/** What the store needs of a connection: `pg`'s Pool and Client fit, as do most wrappers. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface PgStoreOptions {
  /** A pool (or client) on a PostgreSQL database holding the table. */
  pool: Queryable;
  /** The table, created by the caller from `sql/intents.sql`; may be schema-qualified. */
  table?: string;
}

type Row = {
  intent_id: string;
  idempotency_key: string;
  request: StoredIntent["request"];
  created_at: Date;
  answer: StoredIntent["answer"] | null;
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Intents in a PostgreSQL table the caller owns (its DDL is `sql/intents.sql`, to put in the
 * caller's own migrations), so an intent can sit beside the caller's data and be backed up with it.
 * Commits are durable as PostgreSQL makes them; the primary key makes `create` atomic.
 */
export function pgStore({ pool, table = "payment_intents" }: PgStoreOptions): IntentStore {
  const parts = table.split(".");
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p)))
    throw new TypeError(`pgStore: table must be a plain or schema-qualified identifier, got ${table}`);
  const name = parts.map((p) => `"${p}"`).join(".");
  const columns = "intent_id, idempotency_key, request, created_at, answer";
  const toIntent = (row: Row): StoredIntent => ({
    intentId: row.intent_id,
    key: row.idempotency_key,
    request: row.request,
    createdAt: new Date(row.created_at).toISOString(),
    ...(row.answer ? { answer: row.answer } : {}),
  });

  return {
    async create(intent) {
      const inserted = await pool.query(
        `INSERT INTO ${name} (${columns}) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (intent_id) DO NOTHING RETURNING ${columns}`,
        [
          intent.intentId,
          intent.key,
          JSON.stringify(intent.request),
          intent.createdAt,
          intent.answer ? JSON.stringify(intent.answer) : null,
        ],
      );
      const row = inserted.rows[0] as Row | undefined;
      if (row) return toIntent(row);
      // The earlier intent, read in a statement of its own so it sees a concurrent insert's commit.
      const existing = await pool.query(`SELECT ${columns} FROM ${name} WHERE intent_id = $1`, [
        intent.intentId,
      ]);
      const found = existing.rows[0] as Row | undefined;
      if (!found) throw new Error(`pgStore: intent ${intent.intentId} neither inserted nor found`);
      return toIntent(found);
    },
    async list() {
      const { rows } = await pool.query(`SELECT ${columns} FROM ${name} ORDER BY created_at, intent_id`);
      return (rows as Row[]).map(toIntent);
    },
    async delete(intentId) {
      await pool.query(`DELETE FROM ${name} WHERE intent_id = $1`, [intentId]);
    },
    async settle(intent, answer) {
      await pool.query(`UPDATE ${name} SET answer = $3 WHERE intent_id = $1 AND idempotency_key = $2`, [
        intent.intentId,
        intent.key,
        JSON.stringify(answer),
      ]);
    },
  };
}
