import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

/**
 * The real app for the SDK's tests: the payment provider (the simulator of Stripe's API) and the
 * API server (REST, no Next build) as processes of the repository, against the suite's
 * PostgreSQL. Started by path, not imported: the package stays stand-alone.
 */
const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

export interface AppStack {
  /** The API's base URL (the client adds `/api/v1`). */
  url: string;
  /** The deployment's operator credential, for `apiKey` in the operators' calls. */
  adminToken: string;
  stop(): Promise<void>;
}

export async function startAppStack(): Promise<AppStack> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("DATABASE_URL is required");
  const adminToken = `admin_${randomBytes(12).toString("hex")}`;
  const provider = await startScript("provider/main.ts", /provider listening on (http:\/\/\S+)/, {
    PROVIDER_DATABASE_URL: databaseUrl,
    PROVIDER_PORT: "0",
    PROVIDER_PARENT_PID: String(process.pid),
  });
  try {
    const api = await startScript("scripts/api.ts", /api listening on (http:\/\/\S+)/, {
      PORT: "0",
      HOSTNAME: "127.0.0.1",
      BACKGROUND_JOBS: "off",
      PAYMENT_PROVIDER_URL: provider.url,
      ADMIN_TOKEN: adminToken,
    });
    return {
      url: api.url,
      adminToken,
      async stop() {
        await api.stop();
        await provider.stop();
      },
    };
  } catch (error) {
    await provider.stop();
    throw error;
  }
}

async function startScript(script: string, readyLine: RegExp, env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${stderr}`)), 30_000);
    child.stdout?.on("data", (d) => {
      const match = readyLine.exec(String(d));
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
