import { parseEnv } from "../server/env";
import { startStack } from "./lib/stack";
import { runWithStack } from "./lib/supervise";

const { PORT } = parseEnv(process.env);
const stack = await startStack("dev");
runWithStack(stack, "node_modules/.bin/next", ["dev", "--port", String(PORT)]);
