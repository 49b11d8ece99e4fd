import { fileURLToPath } from "node:url";
import { applyMigrations } from "../server/db/migrate";
import { loadDotEnv } from "./lib/dotenv";

loadDotEnv(false);

// Usage: DATABASE_URL=… tsx scripts/migrate.ts   (MIGRATIONS_DIR overrides prisma/migrations)
// DIRECT_DATABASE_URL, when set, is the server itself rather than a pooler in front of it.
const databaseUrl = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("DATABASE_URL is not set");
  process.exit(1);
}
const migrationsDir =
  process.env.MIGRATIONS_DIR ?? fileURLToPath(new URL("../prisma/migrations", import.meta.url));

try {
  const { applied } = await applyMigrations(databaseUrl, { migrationsDir, log: (msg) => console.log(msg) });
  console.log(
    applied.length > 0 ? `applied ${applied.length}: ${applied.join(", ")}` : "database is up to date",
  );
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
