import pg from "pg";
import { codeOf, errorLayers } from "./error-codes";

/**
 * Whether an error means the database could not be reached or dropped the connection (a lost
 * primary, a failover, a restart): work that failed this way is safe to retry, and the HTTP layer
 * answers it with a retryable 503. Decided by codes, never by class identity or message text:
 * SQLSTATEs (the server's, or the ones Prisma carries in `meta.driverAdapterError`), Node's socket
 * errnos, Prisma's connection codes, and a brand that our pools put on node-postgres's own
 * code-less connection errors ("Connection terminated unexpectedly", "Query read timeout").
 */
export function databaseUnavailable(error: unknown): boolean {
  return errorLayers(error).some(unavailableHere);
}

export const DATABASE_UNAVAILABLE_MESSAGE =
  "The database is unavailable (a failover or restart); nothing was stored: retry with the same Idempotency-Key.";

/** How long a client should wait before retrying work the database was unavailable for. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

/** 08: connection exceptions; 57P01-57P03: shutdown, crash, not yet accepting; 25006: a demoted primary. */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|25006)$/;
const SOCKET_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
/** Can't reach, timed out, operations timed out, connection closed, pool timeout. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/** Prisma's driver adapters' names for the same (DriverAdapterError's cause.kind). */
const ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);

export const CONNECTION_LOST = Symbol.for("idempotent-checkout.db.connection-lost");

function unavailableHere(layer: Record<PropertyKey, unknown>): boolean {
  if (layer[CONNECTION_LOST] === true) return true;
  const code = codeOf(layer);
  if (code && (UNAVAILABLE_SQLSTATE.test(code) || SOCKET_ERRNOS.has(code) || PRISMA_CODES.has(code)))
    return true;
  // A Prisma driver adapter's own name for it, on the adapter error's cause.
  return typeof layer.kind === "string" && ADAPTER_KINDS.has(layer.kind);
}

/**
 * node-postgres reports a lost or silent connection with plain Errors (no SQLSTATE, no errno):
 * "Connection terminated unexpectedly", "Query read timeout", "timeout exceeded when trying to
 * connect". Every code-less error of a connection or a statement is of that kind (the server's
 * errors carry a SQLSTATE, the socket's an errno; a TypeError is a programming error), so our
 * clients brand those with CONNECTION_LOST.
 */
function branded(error: unknown): unknown {
  if (
    error instanceof Error &&
    !(error instanceof TypeError) &&
    typeof (error as { code?: unknown }).code !== "string"
  )
    Object.defineProperty(error, CONNECTION_LOST, { value: true });
  return error;
}

type Callback = (err: unknown, ...rest: unknown[]) => void;
const brandCallback = (args: unknown[]) => {
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === "function")
    args[last] = (err: unknown, ...rest: unknown[]) => (callback as Callback)(branded(err), ...rest);
  return typeof callback === "function";
};

/** pg.Client whose connection-loss errors carry CONNECTION_LOST. */
export class BrandingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: node-postgres's overloads, passed through as they are.
  override query(...args: any[]): any {
    if (brandCallback(args)) return (super.query as (...a: unknown[]) => unknown)(...args);
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    return result instanceof Promise
      ? result.catch((error: unknown) => {
          throw branded(error);
        })
      : result;
  }

  // biome-ignore lint/suspicious/noExplicitAny: as above.
  override connect(...args: any[]): any {
    if (brandCallback(args)) return (super.connect as (...a: unknown[]) => unknown)(...args);
    return (super.connect() as Promise<unknown>).catch((error: unknown) => {
      throw branded(error);
    });
  }
}

/** pg.Pool whose own "timeout exceeded when trying to connect" is branded too. */
export class BrandingPool extends pg.Pool {
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  override connect(...args: any[]): any {
    if (brandCallback(args)) return (super.connect as (...a: unknown[]) => unknown)(...args);
    return (super.connect() as Promise<pg.PoolClient>).catch((error: unknown) => {
      throw branded(error);
    });
  }
}
