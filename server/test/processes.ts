import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The API tier (scripts/api.ts, what `npm run start:api` runs) as a real process that a test can
 * SIGKILL: on loopback, without background jobs unless the test asks for them.
 */
export async function startApiProcess(env: Record<string, string>) {
  const started = await startScript(
    "scripts/api.ts",
    { HOSTNAME: "127.0.0.1", BACKGROUND_JOBS: "off", ...env },
    /api listening on (http:\/\/\S+)/,
  );
  return { ...started, url: started.ready };
}

/** `npm run worker` (the completer, sweep, reconciler and relay) as a real process. */
export async function startWorkerProcess(env: Record<string, string>) {
  return startScript("scripts/worker.ts", env, /(worker running)/);
}

async function startScript(script: string, env: Record<string, string>, readyLine: RegExp) {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
    if (process.env.DEBUG_API) process.stderr.write(String(d)); // to see why a test got a 500
  });
  const ready = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${stderr}`)), 60_000);
    child.stdout?.on("data", (d) => {
      const match = readyLine.exec(String(d));
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}: ${stderr}`)));
  });
  const exited = new Promise<NodeJS.Signals | number | null>((r) =>
    child.once("exit", (code, signal) => r(signal ?? code)),
  );
  return {
    ready,
    pid: child.pid as number,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

export async function postPayment(
  baseUrl: string,
  token: string,
  key: string,
  body: { orderId: string; paymentMethod: string },
) {
  const res = await fetch(`${baseUrl}/api/trpc/payments.create`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
