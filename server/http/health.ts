import { type Db, db } from "../db";

/** The database answers a trivial query within two seconds, or the service is unhealthy. */
export async function checkHealth(prisma: Db = db()): Promise<{
  status: "ok" | "unavailable";
  database: "up" | "down";
  error?: string;
}> {
  try {
    await Promise.race([
      prisma.$queryRaw`SELECT 1`,
      new Promise((_, reject) => setTimeout(() => reject(new Error("database timed out")), 2000).unref()),
    ]);
    return { status: "ok", database: "up" };
  } catch (error) {
    return {
      status: "unavailable",
      database: "down",
      error: error instanceof Error ? error.message : String(error),
    };
  }
}
