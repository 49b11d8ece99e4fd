import { keyHistory as history } from "@idempotent-checkout/idempotency/admin";
import { claimStatement } from "@idempotent-checkout/idempotency/bench";
import type { Db } from "../db";
import { rawQuery } from "../db";
import { idempotency, keyDb } from "../keys";

/** A key's history as the admin shows it. */
export const keyHistory = (prisma: Db, keyId: bigint) => history(keyDb(prisma), keyId);
/** This process's outcome counts. */
export const { counters } = idempotency;

/** Claims a key as a request would (the layer's own claim statement), without running a handler. */
export async function claimTestKey(
  prisma: Db,
  p: Parameters<typeof claimStatement>[0],
): Promise<{ id: bigint; fence: number } | undefined> {
  const [row] = await rawQuery<{ id: bigint | string; fence: number }>(prisma, claimStatement(p));
  return row && { id: BigInt(row.id), fence: row.fence };
}
