import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { requireDatabaseUrl } from "./env";
import { type Prisma, PrismaClient } from "./generated/prisma/client";
import { errorField, logger } from "./log";

export type Db = PrismaClient;
/** The client inside an interactive transaction: what a phase's writes run on. */
export type Tx = Prisma.TransactionClient;

export function createPool(connectionString: string, max = 10): pg.Pool {
  // Our own pool, so that a connection cut by a database restart is logged rather than thrown
  // as an uncaught 'error' event that would take the whole server down.
  const pool = new pg.Pool({
    connectionString,
    max,
    allowExitOnIdle: true,
    // Bounds, so that one stuck request cannot hold locks or connections for ever.
    connectionTimeoutMillis: 10_000,
    statement_timeout: 30_000,
    idle_in_transaction_session_timeout: 60_000,
  });
  const warn = (error: Error) => logger.warn({ err: errorField(error) }, "database connection failed");
  pool.on("error", warn);
  pool.on("connect", (client) => client.on("error", warn));
  return pool;
}

export function createPrismaClient(connectionString: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(createPool(connectionString)) });
}

// One client per process; Next's dev server reloads modules, so keep it on globalThis.
const holder = globalThis as unknown as { prisma?: PrismaClient };

export function db(): PrismaClient {
  holder.prisma ??= createPrismaClient(requireDatabaseUrl());
  return holder.prisma;
}
