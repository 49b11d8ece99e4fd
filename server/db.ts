import { PrismaPg } from "@prisma/adapter-pg";
import { requireDatabaseUrl } from "./env";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

export function createPrismaClient(connectionString: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max: 10 }) });
}

// One client per process; Next's dev server reloads modules, so keep it on globalThis.
const holder = globalThis as unknown as { prisma?: PrismaClient };

export function db(): PrismaClient {
  holder.prisma ??= createPrismaClient(requireDatabaseUrl());
  return holder.prisma;
}
