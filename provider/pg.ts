/**
 * What the simulator's stores share: the schema name, the transaction wrapper, advisory-lock
 * keys and time-ordered ids.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Pool, PoolClient } from "pg";

export type { PoolClient };

export const SCHEMA = "payment_provider";

/** A bigint advisory-lock key derived from a name (64 bits of sha256). */
export function advisoryLockId(name: string): string {
  return createHash("sha256").update(name).digest().readBigInt64BE(0).toString();
}

/**
 * `<prefix>_` and 24 hex digits: the millisecond clock first, then 48 random bits, so new rows land
 * at the right edge of the id indexes (here and in the shop's tables) rather than on random pages.
 */
export function timeOrderedId(prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, "0")}${randomBytes(6).toString("hex")}`;
}

/**
 * Runs `work` in a READ COMMITTED transaction: advisory locks its statements take are held to
 * COMMIT. A connection whose transaction could not end is dropped, not pooled.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // The server may end the connection between two statements (a restart, an admin's terminate):
  // pg then emits "error" on the checked-out client, which would end the process unheard.
  // The next statement fails on its own; the client is dropped, not pooled.
  const onError = (err: Error) => {
    broken = err;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch (rollbackErr) {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    }
    throw err;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}
