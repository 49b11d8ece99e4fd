import { afterEach, describe, expect } from "vitest";
import { type ConnectionLimits, closeClient, createPool, createPrismaClient } from "./db";
import { directTestDatabaseUrl } from "./test/fixtures";
import { type StallingProxy, startStallingProxy } from "./test/stalling-proxy";
import { it } from "./test/vitest";

const limits: ConnectionLimits = { connectTimeoutMs: 1000, queryTimeoutMs: 1500, keepAliveMs: 1000 };
let proxy: StallingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

async function elapsed(work: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { ms: Date.now() - started, error };
}

// A database that stops answering without closing its sockets (a crashed host, a partition, a
// primary lost behind a proxy) must not hold a statement, a pool slot or a lease forever.
describe("a connection whose server went silent", () => {
  it("fails a statement within the query timeout, a new connection within the connect timeout, and the pool recovers", async () => {
    proxy = await startStallingProxy(directTestDatabaseUrl());
    const pool = createPool(proxy.url, 2, undefined, limits);
    try {
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      proxy.stall();
      const statement = await elapsed(pool.query("SELECT 2"));
      expect(statement.error).toBeInstanceOf(Error);
      expect(statement.ms).toBeGreaterThanOrEqual(limits.queryTimeoutMs - 50);
      expect(statement.ms).toBeLessThan(limits.queryTimeoutMs + 1500);
      // The pool dropped the silent connection: the next statement needs a new one, which the
      // stalled proxy accepts and never answers.
      const opening = await elapsed(pool.query("SELECT 3"));
      expect(opening.error).toBeInstanceOf(Error);
      expect(opening.ms).toBeLessThan(limits.connectTimeoutMs + 1500);
      proxy.resume();
      expect((await pool.query("SELECT 4 AS four")).rows).toEqual([{ four: 4 }]);
    } finally {
      await pool.end();
    }
  });

  it("fails Prisma's statements and transactions the same way, and its client recovers", async () => {
    proxy = await startStallingProxy(directTestDatabaseUrl());
    const prisma = createPrismaClient(proxy.url, { limits, preparedStatements: false });
    try {
      expect(await prisma.$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      proxy.stall();
      const statement = await elapsed(prisma.$queryRaw`SELECT 2`);
      expect(statement.error).toBeInstanceOf(Error);
      expect(statement.ms).toBeLessThan(limits.queryTimeoutMs + 1500);
      const transaction = await elapsed(prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 3`));
      expect(transaction.error).toBeInstanceOf(Error);
      expect(transaction.ms).toBeLessThan(limits.connectTimeoutMs + limits.queryTimeoutMs + 1500);
      proxy.resume();
      expect(await prisma.$queryRaw`SELECT 4 AS four`).toEqual([{ four: 4 }]);
    } finally {
      await closeClient(prisma);
    }
  });
});
