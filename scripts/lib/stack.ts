import { createPrismaClient } from "../../server/db";
import { applyMigrations } from "../../server/db/migrate";
import { parseEnv } from "../../server/env";
import { seedDemoData } from "../../server/seed";
import { startDatabase } from "./embedded-pg";
import { startProvider } from "./provider-process";

export interface Stack {
  /** Variables for the processes that use the stack (Next, Vitest, Playwright). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Everything the app needs before Next starts: the database (embedded unless DATABASE_URL is
 * set), its migrations and seed, and the payment provider process (unless PAYMENT_PROVIDER_URL
 * is set). Fails before starting anything when the environment is invalid.
 */
export async function startStack(instance: "dev" | "test"): Promise<Stack> {
  const env = parseEnv(process.env);
  const database = await startDatabase({ instance });
  const stops: (() => Promise<void>)[] = [() => database.stop()];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((e: unknown) => console.error(e));
  };
  try {
    const { applied } = await applyMigrations(database.url);
    if (applied.length > 0) console.log(`migrations applied: ${applied.join(", ")}`);
    const prisma = createPrismaClient(database.url);
    if (await seedDemoData(prisma, { production: env.isProduction })) console.log("demo data seeded");
    await prisma.$disconnect();

    let providerUrl = env.PAYMENT_PROVIDER_URL;
    if (!providerUrl) {
      // dev on a fixed port, so `npm run worker` can find it; tests on any free port.
      const port = Number(process.env.PROVIDER_PORT ?? (instance === "dev" ? 4010 : 0));
      const provider = await startProvider({ databaseUrl: database.url, port });
      stops.push(() => provider.stop());
      providerUrl = provider.url;
    }
    console.log(
      `database ${database.embedded ? "embedded" : "external"}; payment provider at ${providerUrl}`,
    );
    return {
      env: {
        DATABASE_URL: database.url,
        PAYMENT_PROVIDER_URL: providerUrl,
        CHECKOUT_PARENT_PID: String(process.pid),
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
