import type { Db } from "../db";

/**
 * The account that scopes the operators' idempotency keys (decision 0110). Keys belong to an
 * account from authentication; an operator authenticates as the admin, not as a shopper, so the
 * operators share one account of their own. A refund's own account is its payment's.
 * Not created by the migration: the demo seed runs only on a database without accounts.
 */
export const OPERATORS_ACCOUNT = {
  id: "01900000-0000-7000-8000-0000000000a1",
  handle: "operators",
  name: "Operators",
  // Never a shopper's handle (theirs is their email) and never deliverable (RFC 2606 .invalid).
  email: "operators@operators.invalid",
} as const;

const holder = globalThis as unknown as { operatorsAccountReady?: WeakSet<object> };
holder.operatorsAccountReady ??= new WeakSet();
const ready = holder.operatorsAccountReady;

/** The operators' account, created on first use; concurrent calls are harmless. */
export async function operatorsAccount(prisma: Db): Promise<{ id: string }> {
  if (ready.has(prisma)) return { id: OPERATORS_ACCOUNT.id };
  const { id, handle, name, email } = OPERATORS_ACCOUNT;
  await prisma.$executeRaw`
    INSERT INTO accounts (id, handle, name, email) VALUES (${id}::uuid, ${handle}, ${name}, ${email})
    ON CONFLICT DO NOTHING`;
  const found = await prisma.account.findUnique({ where: { id }, select: { handle: true } });
  if (found?.handle !== handle)
    throw new Error(`the operators' account ${id} could not be created (handle or email taken)`);
  ready.add(prisma);
  return { id };
}
