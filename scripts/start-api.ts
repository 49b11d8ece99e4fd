import { apiTierArgs } from "./lib/api-bundle";
import { enterStage } from "./lib/dotenv";
import { runWithStack } from "./lib/supervise";

// `npm run start:api`: the API tier (scripts/api.ts, bundled as dist/api.mjs) on its stack, configured as `npm start` is.
// Before any import that reads the environment: `.env`, APP_ENV=production unless set, secrets checked.
const { PORT, isProduction } = await enterStage("production");
const { startStack, stackInstance } = await import("./lib/stack");
const stack = await startStack(stackInstance(isProduction), { appUrl: `http://127.0.0.1:${PORT}` });
// The production bundle (dist/api.mjs), made first when `npm run build` has not made it.
runWithStack(stack, process.execPath, apiTierArgs());
