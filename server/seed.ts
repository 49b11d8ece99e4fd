import { randomUUID } from "node:crypto";
import { hashPassword, verifyPassword } from "better-auth/crypto";
import { zMoney } from "../shared/currency";
import { DEMO_CUSTOMERS, DEMO_PASSWORD } from "./auth/demo";
import { hashToken } from "./auth/tokens";
import type { Db, Tx } from "./db";

export { DEMO_CUSTOMERS, DEMO_PASSWORD };

/** The demo catalogue's main currency; one product is in yen, a zero-decimal currency (decision 0175). */
export const DEMO_CURRENCY = "EUR";

/**
 * Listed by SKU (the shop's order), so the yen product comes last and the first ones are in euros.
 * An order is in one currency: the yen product is ordered on its own.
 */
export const DEMO_CATALOG = [
  { sku: "TEE-CLASSIC", name: "Classic cotton tee", priceMinor: 2500, currency: DEMO_CURRENCY },
  { sku: "MUG-ENAMEL", name: "Enamel camp mug", priceMinor: 1800, currency: DEMO_CURRENCY },
  { sku: "SOCKS-WOOL", name: "Merino socks, two pairs", priceMinor: 1200, currency: DEMO_CURRENCY },
  { sku: "CAP-CANVAS", name: "Canvas cap", priceMinor: 2200, currency: DEMO_CURRENCY },
  { sku: "TOTE-BAG", name: "Heavy tote bag", priceMinor: 1500, currency: DEMO_CURRENCY },
  { sku: "TOWEL-IMABARI", name: "Imabari cotton towel", priceMinor: 1800, currency: "JPY" },
] as const;

/** The catalogue's rows, each price checked as valid in its currency (a bad entry fails the seed). */
export function demoProducts() {
  return DEMO_CATALOG.map((p) => {
    zMoney("price").parse({ amountMinor: p.priceMinor, currency: p.currency });
    return { ...p };
  });
}

/** Demo products added since a database was seeded (the yen one) are stocked too; the others are kept. */
export async function stockDemoProducts(tx: Tx): Promise<void> {
  await tx.product.createMany({ data: demoProducts(), skipDuplicates: true });
}

/**
 * Creates the demo customers, their API tokens and the catalogue on an empty database, once:
 * an advisory lock makes concurrent starts wait, and a database with any shopper is left alone.
 * Production gets no demo data at all.
 */
export async function seedDemoData(prisma: Db, opts: { production: boolean }): Promise<boolean> {
  if (opts.production) return false;
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('idempotent-checkout:seed'))`;
    const password = await hashPassword(DEMO_PASSWORD);
    // The system's own accounts (on .invalid, made by a migration) do not count (decision 0147).
    const people = await tx.account.count({ where: { NOT: { email: { endsWith: ".invalid" } } } });
    if (people > 0 || (await tx.product.count()) > 0) {
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
      await stockDemoProducts(tx);
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
    await tx.product.createMany({ data: demoProducts() });
    return true;
  });
}

export interface DisabledDemoCredentials {
  /** The demo API keys deleted (their plaintext is public: it is in this file). */
  apiKeys: string[];
  /** The demo customers whose demo password (and sessions) were removed. */
  passwords: string[];
}

/**
 * For a production start on a database that development seeded: deletes the demo API keys and
 * the demo password of the demo customers (and their sessions), keeping the accounts and their
 * orders. What it removed is returned so the start can say so (docs/decisions/0061).
 */
export async function disableDemoCredentials(prisma: Db): Promise<DisabledDemoCredentials> {
  const byHash = new Map(DEMO_CUSTOMERS.map((c) => [hashToken(c.token), c.token]));
  const keys = await prisma.apiToken.findMany({
    where: { tokenHash: { in: [...byHash.keys()] } },
    select: { id: true, tokenHash: true },
  });
  await prisma.apiToken.deleteMany({ where: { id: { in: keys.map((k) => k.id) } } });
  const credentials = await prisma.credential.findMany({
    where: { providerId: "credential", account: { email: { in: DEMO_CUSTOMERS.map((c) => c.email) } } },
    select: { id: true, password: true, ownerId: true, account: { select: { email: true } } },
  });
  const passwords: string[] = [];
  for (const c of credentials) {
    if (!c.password || !(await verifyPassword({ hash: c.password, password: DEMO_PASSWORD }))) continue;
    await prisma.credential.delete({ where: { id: c.id } });
    await prisma.session.deleteMany({ where: { accountId: c.ownerId } });
    passwords.push(c.account.email);
  }
  return { apiKeys: keys.map((k) => byHash.get(k.tokenHash) ?? k.id), passwords };
}
