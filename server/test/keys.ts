import type { Db } from "../db";
import { rawQuery } from "../db";
import { claimStatement } from "../keys";

/** Claims a key as a request would (the layer's own claim statement), without running a handler. */
export async function claimTestKey(
  prisma: Db,
  p: Parameters<typeof claimStatement>[0],
): Promise<{ id: bigint; fence: number } | undefined> {
  const [row] = await rawQuery<{ id: bigint | string; fence: number }>(prisma, claimStatement(p));
  return row && { id: BigInt(row.id), fence: row.fence };
}
