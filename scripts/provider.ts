import { spawn } from "node:child_process";
import { loadDotEnv } from "./lib/dotenv";
import { startDatabase } from "./lib/embedded-pg";

loadDotEnv(false);

/**
 * `npm run provider`: the payment provider alone. With neither PROVIDER_DATABASE_URL nor
 * DATABASE_URL set it keeps its charges in an embedded PostgreSQL of its own (.data/pg-provider).
 */
const configured = process.env.PROVIDER_DATABASE_URL || process.env.DATABASE_URL;
const database = configured ? null : await startDatabase({ instance: "provider", databases: ["provider"] });
const child = spawn(process.execPath, ["--import", "tsx", "provider/main.ts"], {
  stdio: "inherit",
  env: {
    ...process.env,
    ...(database ? { PROVIDER_DATABASE_URL: database.url } : {}),
    PROVIDER_PARENT_PID: String(process.pid),
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => {
  void (database?.stop() ?? Promise.resolve()).finally(() => process.exit(code ?? 0));
});
