import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { enterStage } from "./lib/dotenv";
import { runWithStack } from "./lib/supervise";

// Before any import that reads the environment: `.env`, APP_ENV=production unless set, secrets checked.
const { PORT, isProduction } = await enterStage("production");
const { startStack, stackInstance } = await import("./lib/stack");
// `npm start` on a fresh clone builds first, so it works without knowing about `npm run build`.
if (!existsSync(`${process.env.NEXT_DIST_DIR ?? ".next"}/BUILD_ID`))
  execFileSync("node_modules/.bin/next", ["build"], { stdio: "inherit" });
const stack = await startStack(stackInstance(isProduction), { appUrl: `http://127.0.0.1:${PORT}` });
runWithStack(stack, "node_modules/.bin/next", ["start", "--port", String(PORT)]);
