import { createPrismaClient } from "../db";
import { applyMigrations } from "../db/migrate";
import { seedDemoData } from "../seed";

/**
 * Integration tests run against a real PostgreSQL: `npm test` starts the embedded one and sets
 * DATABASE_URL; running Vitest by hand needs DATABASE_URL pointing at a server.
 */
export default async function setup() {
  // Migrations and the seed need a session of their own: the direct URL when DATABASE_URL is a pooler.
  const url = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set: run `npm test`, or point it at a PostgreSQL server.");
  await applyMigrations(url);
  const prisma = createPrismaClient(url);
  await seedDemoData(prisma, { production: false });
  await prisma.$disconnect();
}
