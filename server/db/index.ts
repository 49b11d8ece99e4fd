import "#server-only";
import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { v7 as uuidv7 } from "uuid";
import { env, requireDatabaseUrl } from "../env";
import { type Prisma, PrismaClient } from "../generated/prisma/client";
import { errorField, logger } from "../log";
import { BrandingClient, BrandingPool } from "./unavailable";

export type Db = PrismaClient;
/** The client inside an interactive transaction: what a phase's writes run on. */
export type Tx = Prisma.TransactionClient;

/**
 * A new row id: a UUIDv7, ordered by creation time, so each insert lands at the right edge of the
 * B-tree indexes keyed by it instead of on a random page: fewer pages dirtied and, after each
 * checkpoint, far fewer full-page images in the WAL (decision 0046).
 */
export function newId(): string {
  return uuidv7();
}

/**
 * How long the server's own pools keep a spare connection open unused. pg-pool hands out its most
 * recently used connection first, so under a steady load the spare ones sit idle; closed after
 * pg-pool's default 10 s, each came back at the next burst as a new backend that forks, warms its
 * caches and plans every statement five times before it uses its cached plan (decision 0047).
 * Short-lived clients (scripts, tests) keep the default, so that their leftovers close soon.
 */
export const SERVER_IDLE_CONNECTION_MS = 5 * 60_000;

/**
 * SQLSTATEs of a connection the server ended: its shutdown or restart (which stopping `npm run
 * dev` causes), or `pg_terminate_backend`. The pool opens another when it next needs one.
 */
const CLOSED_BY_SERVER = new Set(["57P01", "57P02", "57P03"]);

/** True for the error of a connection the server ended (logged as information, not a failure). */
export function closedByServer(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CLOSED_BY_SERVER.has(code);
}

/** How a pool's connections give up on a database that stopped answering. */
export interface ConnectionLimits {
  /** Opening a connection, and waiting for a free one in the pool. */
  connectTimeoutMs: number;
  /** Waiting for the answer to one statement, in the client: the only bound on a half-open socket. */
  queryTimeoutMs: number;
  /** Idle time before the kernel's keepalive probes start. */
  keepAliveMs: number;
}

export const connectionLimits = (): ConnectionLimits => ({
  connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
  queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS,
  keepAliveMs: env.DATABASE_KEEPALIVE_MS,
});

/**
 * node-postgres settings for `limits`, for every pool of the server (Prisma's, the limiter's,
 * pg-boss's). Without them a statement sent on a connection whose server vanished without a FIN
 * (a crashed host, a partition, a failover behind a proxy) waits forever, and so does whatever
 * holds it (an attempt renewing its lease, a transaction holding a pool slot).
 */
export function connectionSettings(limits: ConnectionLimits = connectionLimits()) {
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: limits.keepAliveMs,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    query_timeout: limits.queryTimeoutMs,
  } satisfies pg.PoolConfig;
}

export function createPool(
  connectionString: string,
  max = 10,
  idleTimeoutMillis?: number,
  limits?: ConnectionLimits,
): pg.Pool {
  // Our own pool, so that a connection cut by a database restart is logged rather than thrown
  // as an uncaught 'error' event that would take the whole server down.
  // Branding: node-postgres's code-less connection errors get a code the HTTP layer can map to a
  // retryable 503 (server/db/unavailable.ts).
  const pool = new BrandingPool({
    Client: BrandingClient,
    connectionString,
    max,
    allowExitOnIdle: true,
    ...connectionSettings(limits),
    ...(idleTimeoutMillis === undefined ? {} : { idleTimeoutMillis }),
    // No startup parameters (statement_timeout and the like): PgBouncer in transaction mode
    // refuses them. The timeouts are database settings instead (migration 20261201001200).
  });
  const onError = (error: Error) => {
    if (closedByServer(error)) logger.info({ code: error.code }, "database closed a pooled connection");
    else logger.warn({ err: errorField(error) }, "database connection failed");
  };
  pool.on("error", onError);
  pool.on("connect", (client) => client.on("error", onError));
  return pool;
}

/**
 * Whether this server's connections are sessions of their own, where statements may be prepared by
 * name (decision 0041): off behind PgBouncer in transaction mode.
 */
export const preparedStatementsOn = (): boolean => env.DATABASE_PREPARED_STATEMENTS === "on";

export function createPrismaClient(
  connectionString: string,
  opts: { preparedStatements?: boolean; idleConnectionMs?: number; limits?: ConnectionLimits } = {},
): PrismaClient {
  const prepared = opts.preparedStatements ?? preparedStatementsOn();
  const statementNameGenerator = prepared ? statementNames() : undefined;
  const pool = createPool(connectionString, undefined, opts.idleConnectionMs, opts.limits);
  const client = new PrismaClient({
    adapter: new PrismaPg(pool, { statementNameGenerator }),
    // A burst waits for a free connection as long as the pool itself would (Prisma's default
    // is 2 s), instead of failing with a 500 while the database is merely busy.
    transactionOptions: { maxWait: 10_000 },
  });
  shareConnections(client, pool, statementNameGenerator);
  return client;
}

type SharedPool = { pool: pg.Pool; name?: (query: { sql: string }) => string };
// One client per process (Next's dev server reloads modules), and its pool, on globalThis. Next
// also bundles instrumentation.ts apart from the routes, each with its own copy of this module:
// a route's copy must find the pool of the client the other copy created, or every rawQuery
// falls back to the ORM.
const holder = globalThis as unknown as { prisma?: PrismaClient; sharedPools?: WeakMap<object, SharedPool> };
holder.sharedPools ??= new WeakMap();
const sharedPools = holder.sharedPools;

/** Lets `rawQuery` send `client`'s statements on `pool`, the pool its adapter was built on. */
export function shareConnections(
  client: PrismaClient,
  pool: pg.Pool,
  name?: (query: { sql: string }) => string,
): void {
  sharedPools.set(client, { pool, name });
}

// int8 as bigint, as Prisma's $queryRaw answers it; every other type as node-postgres parses it.
const int8AsBigint = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? BigInt : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/**
 * One autocommitted statement of the request path, sent by node-postgres on the client's own
 * pool: the ORM's work around a raw query costs about four times the driver's (220 against 47 µs
 * of CPU per query, measured here). A transaction client (`Tx`) has no pool of its own: its
 * statements go through the ORM, on the transaction's connection.
 */
export async function rawQuery<T>(
  db: Db | Tx,
  statement: { readonly text: string; readonly values: readonly unknown[] },
): Promise<T[]> {
  const shared = sharedPools.get(db);
  if (!shared) return db.$queryRawUnsafe<T[]>(statement.text, ...statement.values);
  const result = await shared.pool.query({
    text: statement.text,
    values: [...statement.values],
    name: shared.name?.({ sql: statement.text }) || undefined,
    types: int8AsBigint,
  });
  return result.rows as T[];
}

/**
 * Names a statement after its text, so node-postgres prepares it once per connection and the
 * server reuses its parse and plan. Bounded: SQL whose text varies (lists of any length) would
 * otherwise fill every connection's statement cache; past the bound, statements go unnamed.
 */
export function statementNames(max = 500): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && names.size < max) {
      name = `s_${createHash("sha1").update(sql).digest("base64url")}`;
      names.set(sql, name);
    }
    // "" is node-postgres's unnamed statement: parsed and planned on every call.
    return name ?? "";
  };
}

/**
 * Disconnects `client` and closes its pool, which Prisma's `$disconnect` leaves open: for scripts
 * that stop their database next, so that its shutdown does not cut (and log) idle connections.
 */
export async function closeClient(client: PrismaClient): Promise<void> {
  await client.$disconnect();
  await sharedPools.get(client)?.pool.end();
  sharedPools.delete(client);
}

/** `closeClient` for the process's client; a later `db()` starts a new one. */
export async function closeDb(): Promise<void> {
  const client = holder.prisma;
  if (!client) return;
  holder.prisma = undefined;
  await closeClient(client);
}

/** The client a long-lived server process uses: its spare connections stay open (decision 0047). */
export function createServerClient(connectionString: string): PrismaClient {
  return createPrismaClient(connectionString, { idleConnectionMs: SERVER_IDLE_CONNECTION_MS });
}

export function db(): PrismaClient {
  holder.prisma ??= createServerClient(requireDatabaseUrl());
  return holder.prisma;
}
