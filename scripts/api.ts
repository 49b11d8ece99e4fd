/**
 * The API tier's server (`npm run start:api` starts it beside its stack; `node dist/api.mjs` in a
 * deployment): /api without Next (docs/decisions/0210). Like `next start`, it runs with
 * NODE_ENV=production unless told otherwise, so it is production unless APP_ENV=development
 * (server/env), whatever started it. Prints `api listening on <url>` when ready.
 */
import { loadDotEnv } from "./lib/dotenv";

const environment: Record<string, string | undefined> = process.env;
environment.NODE_ENV ||= "production";
// `.env` as Next's server reads it, from the folder it runs in (a variable already set wins).
loadDotEnv(false, process.cwd());
try {
  // Imported after NODE_ENV is set: the env module reads the environment once, on import, and
  // a bad one (production without its secrets) throws there, naming each variable.
  const { startApiTier } = await import("../server/http/api-tier");
  console.log(`api listening on ${await startApiTier()}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
