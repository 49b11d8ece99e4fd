import { fileURLToPath } from "node:url";
import nextEnv from "@next/env";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Reads `.env` and its siblings exactly as Next does (`@next/env`: `.env.$mode.local`,
 * `.env.local`, `.env.$mode`, `.env`; a variable already set wins), so one file configures the
 * scripts and the server they start. `dev`: development's files, as `next dev` reads them.
 */
export function loadDotEnv(dev: boolean, dir = ROOT): void {
  nextEnv.loadEnvConfig(dir, dev, { info: () => {}, error: console.error });
}

/**
 * The first thing a command that starts the app does, before it imports anything that reads
 * the environment (server/env parses process.env once, when first loaded): `.env` as Next reads
 * it, then the stage. The production commands (`npm start`, `npm run cluster`) are production
 * unless the caller chose a stage (`APP_ENV=development npm start`: the production build with
 * demo data). A bad environment, such as production without real secrets, stops the command
 * here with a message naming every variable (docs/decisions/0060).
 */
export async function enterStage(command: "production" | "development") {
  loadDotEnv(command === "development");
  if (command === "production") process.env.APP_ENV ||= "production";
  try {
    return (await import("../../server/env")).env;
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
