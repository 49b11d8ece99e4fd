import { randomUUID } from "node:crypto";
import { hashPassword } from "better-auth/crypto";
import { hashToken } from "./auth/tokens";
import type { Db } from "./db";

export const DEMO_CUSTOMERS = [
  { handle: "alice", name: "Alice Martin", email: "alice@example.com", token: "sk_test_alice" },
  { handle: "bob", name: "Bob Okafor", email: "bob@example.com", token: "sk_test_bob" },
] as const;

/** The demo customers' password: development's one-click sign-in uses it; production has none. */
export const DEMO_PASSWORD = "demo-password-not-secret";

export const DEMO_CATALOG = [
  { sku: "TEE-CLASSIC", name: "Classic cotton tee", priceMinor: 2500 },
  { sku: "MUG-ENAMEL", name: "Enamel camp mug", priceMinor: 1800 },
  { sku: "SOCKS-WOOL", name: "Merino socks, two pairs", priceMinor: 1200 },
  { sku: "CAP-CANVAS", name: "Canvas cap", priceMinor: 2200 },
  { sku: "TOTE-BAG", name: "Heavy tote bag", priceMinor: 1500 },
] as const;
export const DEMO_CURRENCY = "EUR";

/**
 * Creates the demo customers, their API tokens and the catalogue on an empty database, once:
 * an advisory lock makes concurrent starts wait, and a database with any account is left alone.
 * Production gets no demo data at all.
 */
export async function seedDemoData(prisma: Db, opts: { production: boolean }): Promise<boolean> {
  if (opts.production) return false;
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('idempotent-checkout:seed'))`;
    const password = await hashPassword(DEMO_PASSWORD);
    if ((await tx.account.count()) > 0 || (await tx.product.count()) > 0) {
      // Demo customers seeded before accounts had passwords get the demo one.
      const bare = await tx.account.findMany({
        where: { handle: { in: DEMO_CUSTOMERS.map((c) => c.handle) }, credentials: { none: {} } },
        select: { id: true },
      });
      for (const { id } of bare) {
        await tx.credential.create({
          data: { id: randomUUID(), ownerId: id, providerId: "credential", providerAccountId: id, password },
        });
      }
      return false;
    }
    for (const c of DEMO_CUSTOMERS) {
      const id = randomUUID();
      await tx.account.create({
        data: {
          id,
          handle: c.handle,
          name: c.name,
          email: c.email,
          apiTokens: { create: { id: randomUUID(), tokenHash: hashToken(c.token), label: "demo" } },
          // better-auth's password credential: provider "credential", its account id is ours.
          credentials: {
            create: { id: randomUUID(), providerId: "credential", providerAccountId: id, password },
          },
        },
      });
    }
    await tx.product.createMany({ data: DEMO_CATALOG.map((p) => ({ ...p, currency: DEMO_CURRENCY })) });
    return true;
  });
}
