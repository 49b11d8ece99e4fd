import { randomBytes, randomInt } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrismaClient } from "../../server/db";
import { applyMigrations } from "../../server/db/migrate";
import { directTestDatabaseUrl } from "../../server/test/fixtures";
import { NO_PGBOUNCER_REASON, type Pooler, pgbouncerForTests, startPgbouncer } from "./pgbouncer";

// What the app must never do again through a transaction pooler, shown against a real PgBouncer,
// next to the app's own pool and migration runner working through it.
const binary = pgbouncerForTests();
const direct = directTestDatabaseUrl();
let pooler: Pooler;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const title = "PgBouncer 1.18 in transaction mode, default settings";
describe.skipIf(!binary)(binary ? title : `${title} (${NO_PGBOUNCER_REASON})`, () => {
  beforeAll(async () => {
    pooler = await startPgbouncer({ databaseUrl: direct, binary: binary as string });
  });
  afterAll(() => pooler?.stop());

  it("refuses a connection that sets statement_timeout as a startup parameter", async () => {
    const client = new pg.Client({ connectionString: pooler.url, statement_timeout: 30_000 });
    await expect(client.connect()).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
  });

  it("breaks named prepared statements: a second client meets the first one's on the same server", async () => {
    const name = `probe_${randomBytes(4).toString("hex")}`;
    const [a, b] = [new pg.Client(pooler.url), new pg.Client(pooler.url)];
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query({ name, text: "SELECT 1" });
      // PgBouncer hands b the server connection a just used (LIFO), where `name` already exists.
      await expect(b.query({ name, text: "SELECT 1" })).rejects.toThrow(
        `prepared statement "${name}" already exists`,
      );
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it("carries the app's pool, with the timeouts the database sets for every session", async () => {
    const prisma = createPrismaClient(pooler.url);
    try {
      const settings = await prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        return tx.$queryRaw<{ statement: string; idle: string }[]>`
          SELECT current_setting('statement_timeout') AS statement,
                 current_setting('idle_in_transaction_session_timeout') AS idle`;
      });
      expect(settings).toEqual([{ statement: "30s", idle: "1min" }]);
    } finally {
      await prisma.$disconnect();
    }
  });

  it("strands a session-level lock on a server connection after the client that took it is gone", async () => {
    const key = randomInt(1, 2 ** 30);
    const held = `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted`;
    await withClient(pooler.url, (c) => c.query("SELECT pg_advisory_lock($1)", [key]));
    // The client has disconnected, yet the lock lives on in PgBouncer's idle server connection.
    expect((await withClient(direct, (c) => c.query(held, [key]))).rows[0].n).toBe(1);
    // A transaction-scoped lock is what works: released at COMMIT, whoever runs next.
    await withClient(pooler.url, async (c) => {
      await c.query("BEGIN");
      await c.query("SELECT pg_advisory_xact_lock($1 + 1)", [key]);
      await c.query("COMMIT");
    });
    expect((await withClient(direct, (c) => c.query(held, [key + 1]))).rows[0].n).toBe(0);
    // Only ending the server connection frees the stranded one.
    await withClient(direct, (c) =>
      c.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1`, [
        key,
      ]),
    );
  });

  it("carries the migration runner: two runners at once apply each migration once", async () => {
    const name = `pooled_${randomBytes(6).toString("hex")}`;
    await withClient(direct, (c) => c.query(`CREATE DATABASE "${name}"`));
    const target = (base: string) => Object.assign(new URL(base), { pathname: `/${name}` }).toString();
    try {
      const runs = await Promise.all([
        applyMigrations(target(pooler.url)),
        applyMigrations(target(pooler.url)),
      ]);
      const applied = runs.flatMap((r) => r.applied);
      expect(new Set(applied).size).toBe(applied.length);
      const recorded = await withClient(target(direct), (c) =>
        c.query("SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL"),
      );
      expect(recorded.rows[0].n).toBe(applied.length);
      const locks = await withClient(target(direct), (c) =>
        c.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 72707369"),
      );
      expect(locks.rows[0].n).toBe(0);
    } finally {
      await withClient(direct, (c) => c.query(`DROP DATABASE "${name}" WITH (FORCE)`));
    }
  });
});
