import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { parseEnv } from "../server/env";
import { startStack } from "./lib/stack";
import { runWithStack } from "./lib/supervise";

const { PORT } = parseEnv(process.env);
// `npm start` on a fresh clone builds first, so it works without knowing about `npm run build`.
if (!existsSync(`${process.env.NEXT_DIST_DIR ?? ".next"}/BUILD_ID`))
  execFileSync("node_modules/.bin/next", ["build"], { stdio: "inherit" });
const stack = await startStack(process.env.CHECKOUT_INSTANCE === "test" ? "test" : "dev");
runWithStack(stack, "node_modules/.bin/next", ["start", "--port", String(PORT)]);
