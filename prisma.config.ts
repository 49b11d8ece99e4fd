import { defineConfig } from "prisma/config";

// Prisma's schema engine cannot be downloaded here; generate does not need it, so point it anywhere.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= "/bin/false";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/unset" },
});
