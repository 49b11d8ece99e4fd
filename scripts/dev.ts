import { enterStage } from "./lib/dotenv";
import { runWithStack } from "./lib/supervise";

// `.env` as `next dev` reads it; APP_ENV stays development unless set: no configuration needed.
const { PORT } = await enterStage("development");
const { startStack } = await import("./lib/stack");
const stack = await startStack("dev", { appUrl: `http://127.0.0.1:${PORT}` });
// Loopback unless HOSTNAME says otherwise: development serves public demo credentials.
const hostname = process.env.HOSTNAME || "127.0.0.1";
runWithStack(stack, "node_modules/.bin/next", ["dev", "--port", String(PORT), "--hostname", hostname]);
