/**
 * `npm run bench:sweep`: what the key sweep costs at volume, beside what dropping a partition of
 * the same rows would cost (docs/scaling.md). In a database of its own, created and dropped here
 * on the server in DATABASE_URL (or an embedded one): N expired, completed keys, each with one
 * event, swept in the sweep's own batches; then the same rows in a plain table, truncated.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { startDatabase } from "../../scripts/lib/embedded-pg";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const server = await startDatabase({ instance: "test" });
const name = `bench_sweep_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}"`);
const url = Object.assign(new URL(server.url), { pathname: `/${name}` }).toString();
try {
  const { applyMigrations } = await import("../../server/db/migrate");
  await applyMigrations(url);
  const { createPrismaClient } = await import("../../server/db");
  const { sweep: sweepExpiredKeys } = (await import("../../server/keys")).idempotency;
  const prisma = createPrismaClient(url);
  const fill = `
    WITH a AS (INSERT INTO accounts (id, handle, name) VALUES (gen_random_uuid(), 'bench', 'bench') RETURNING id),
    k AS (
      INSERT INTO idempotency_keys (account_id, key, procedure, fingerprint, request_params, state,
                                    lease_seconds, response_status, response_body, completed_at, expires_at)
      SELECT a.id, 'k' || g, 'payments.create', repeat('0', 64), '{}'::jsonb, 'completed', 30, 200,
             '{"data":{}}'::json, now() - interval '2 days', now() - interval '1 day'
        FROM a, generate_series(1, ${ROWS}) g RETURNING id)
    -- An ordinary key's history is its row's (decision 0105); one unusual event in ten.
    INSERT INTO idempotency_key_events (key_id, kind, fence) SELECT id, 'taken_over', 2 FROM k WHERE id % 10 = 0`;
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query("SET statement_timeout = 0");
  await db.query(fill);
  await db.query("VACUUM ANALYZE idempotency_keys");
  let t0 = performance.now();
  let swept = 0;
  for (let n = -1; n !== 0; swept += n) n = await sweepExpiredKeys(prisma, { maxBatches: 20 });
  const sweepMs = performance.now() - t0;

  await db.query("CREATE TABLE part_like (LIKE idempotency_keys INCLUDING DEFAULTS INCLUDING INDEXES)");
  await db.query(
    `INSERT INTO part_like (id, account_id, key, procedure, fingerprint, request_params, state, lease_seconds, expires_at, created_at, updated_at, recovery_point, fence, attempts)
     SELECT g, gen_random_uuid(), 'k' || g, 'p', repeat('0', 64), '{}'::jsonb, 'completed', 30, now(), now(), now(), 'started', 1, 1
       FROM generate_series(1, ${ROWS}) g`,
  );
  t0 = performance.now();
  await db.query("DROP TABLE part_like");
  const dropMs = performance.now() - t0;
  console.log(
    `${swept} expired keys (with one event each) swept in ${(sweepMs / 1000).toFixed(1)} s: ` +
      `${Math.round(swept / (sweepMs / 1000))} keys/s; dropping a table of ${ROWS} such rows: ${dropMs.toFixed(0)} ms`,
  );
  await db.end();
  await prisma.$disconnect();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
  await admin.end();
  await server.stop();
}
