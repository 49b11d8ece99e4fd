import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";

export const MIGRATION_FILE = new URL("../../sql/migration.sql", import.meta.url);

export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * A database of its own on the test's PostgreSQL (DATABASE_URL, as `npm test` sets it), with only
 * this package's migration applied, or nothing when `migrate` is false.
 */
export async function freshDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const base = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!base) throw new Error("DATABASE_URL is not set: the package's tests need a PostgreSQL server.");
  const name = `idempotency_pkg_${randomBytes(6).toString("hex")}`;
  await onServer(base, `CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  if (opts.migrate !== false) await pool.query(readFileSync(MIGRATION_FILE, "utf8"));
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      await onServer(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function onServer(url: string, statement: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
