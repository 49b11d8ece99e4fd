import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";

// Prisma's migrate engine cannot run here, so this applies prisma/migrations itself while keeping
// Prisma's bookkeeping, so `prisma migrate status/deploy` agree wherever the engine does exist.

/** Prisma's own advisory-lock key: this runner and `prisma migrate` also exclude each other. */
const LOCK_KEY = 72707369;

/** Verbatim from Prisma's schema engine (postgres flavour). */
const MIGRATIONS_TABLE_DDL = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`;

export type MigrateOptions = { migrationsDir?: string; log?: (msg: string) => void };
type LocalMigration = { name: string; script: string; checksum: string };
type Row = {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
};

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** Prisma also accepts the script with other line endings (git autocrlf) and unpadded legacy hex. */
function matchesChecksum(script: string, checksum: string): boolean {
  const variants = [script, script.replaceAll("\r\n", "\n"), script.replaceAll("\n", "\r\n")];
  return variants.some((v) => {
    const hex = sha256(v);
    if (checksum.length === 64) return hex === checksum;
    return hex.replace(/(..)/g, (b) => Number.parseInt(b, 16).toString(16)) === checksum;
  });
}

function readMigrations(dir: string): LocalMigration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const file = path.join(dir, name, "migration.sql");
      if (!existsSync(file)) throw new Error(`Migration ${name} has no migration.sql (${file})`);
      const bytes = readFileSync(file);
      return { name, script: bytes.toString("utf8"), checksum: sha256(bytes) };
    });
}

/** Refuses to continue when the recorded history and the folders disagree, as Prisma would. */
function checkHistory(rows: Row[], local: Map<string, LocalMigration>, dir: string): Set<string> {
  const applied = new Set<string>();
  for (const row of rows) {
    const name = row.migration_name;
    if (row.rolled_back_at) continue;
    if (!row.finished_at) {
      throw new Error(
        `Migration ${name} failed in an earlier attempt (finished_at is null in _prisma_migrations). ` +
          "Repair the database by hand, then set rolled_back_at on that row before retrying.",
      );
    }
    const migration = local.get(name);
    if (!migration)
      throw new Error(`Migration ${name} is recorded as applied but its folder is missing from ${dir}`);
    if (!matchesChecksum(migration.script, row.checksum)) {
      throw new Error(
        `Migration ${name} was modified after it was applied (checksum of migration.sql changed)`,
      );
    }
    applied.add(name);
  }
  return applied;
}

export async function applyMigrations(
  databaseUrl: string,
  opts: MigrateOptions = {},
): Promise<{ applied: string[] }> {
  const dir = opts.migrationsDir ?? path.join(process.cwd(), "prisma", "migrations");
  const log = opts.log ?? (() => {});
  const local = readMigrations(dir);
  // The lock is transaction-scoped, held by an open transaction on a connection of its own, so
  // the runner also works through PgBouncer in transaction mode (which would strand a session
  // lock on whichever server connection took it). Each migration still commits on its own.
  const guard = new pg.Client({ connectionString: databaseUrl });
  const client = new pg.Client({ connectionString: databaseUrl });
  await guard.connect();
  try {
    await client.connect();
    // The database's timeouts (see 20261201001200) must not cut a long wait or migration short.
    await guard.query(
      "BEGIN; SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0",
    );
    const { rows: tryRows } = await guard.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_xact_lock($1) AS ok",
      [LOCK_KEY],
    );
    if (!tryRows[0]?.ok) {
      log("waiting for the migration lock (another process is migrating)");
      await guard.query("SELECT pg_advisory_xact_lock($1)", [LOCK_KEY]);
    }
    const { rows: exists } = await client.query<{ t: string | null }>(
      "SELECT to_regclass('_prisma_migrations') AS t",
    );
    if (!exists[0]?.t) await client.query(MIGRATIONS_TABLE_DDL);

    const { rows } = await client.query<Row>(
      "SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at",
    );
    const done = checkHistory(rows, new Map(local.map((m) => [m.name, m])), dir);
    const pending = local.filter((m) => !done.has(m.name));
    if (pending.length === 0) log("no pending migrations");

    const applied: string[] = [];
    for (const m of pending) {
      const started = Date.now();
      try {
        await client.query(
          "BEGIN; SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0",
        );
        await client.query(m.script); // simple protocol: the script may hold many statements
        await client.query(
          `INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, clock_timestamp(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        const reason = err instanceof Error ? err.message : String(err);
        throw new Error(`Migration ${m.name} failed and was rolled back: ${reason}`, { cause: err });
      }
      applied.push(m.name);
      log(`applied ${m.name} (${Date.now() - started} ms)`);
    }
    return { applied };
  } finally {
    // Ending the guard's transaction releases the lock; closing it does too, if that fails.
    await guard.query("COMMIT").catch(() => {});
    await Promise.allSettled([guard.end(), client.end()]);
  }
}
