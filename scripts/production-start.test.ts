import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = new URL("..", import.meta.url).pathname;

/** Runs a tsx script or snippet in a clean environment (no secrets inherited from this process). */
function run(args: string[], env: Record<string, string>) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(APP_ENV|ADMIN_TOKEN|SESSION_SECRET|METRICS_TOKEN|DATABASE_URL|DIRECT_DATABASE_URL)$/.test(k),
    ),
  );
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    env: { ...clean, ...env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, output })),
  );
}

describe("the production commands fail closed", () => {
  it("`npm start` with no configuration exits non-zero, naming ADMIN_TOKEN and SESSION_SECRET", async () => {
    const { code, output } = await run(["scripts/start.ts"], {});
    expect(code).toBe(1);
    expect(output).toMatch(/ADMIN_TOKEN: is required when APP_ENV=production/);
    expect(output).toMatch(/SESSION_SECRET: is required when APP_ENV=production/);
    // It stopped before starting anything: no build, no database.
    expect(output).not.toMatch(/database|migrations|Creating an optimized/);
  });

  it("the API tier's server itself (`node dist/api.mjs`, no launcher) is production and refuses to listen without secrets", async () => {
    const { code, output } = await run(["scripts/api.ts"], { NODE_ENV: "", PORT: "0" });
    expect(code).toBe(1);
    expect(output).toMatch(/ADMIN_TOKEN: is required when APP_ENV=production/);
    expect(output).not.toMatch(/api listening/);
  });

  it("`npm run cluster` refuses the development defaults, naming each", async () => {
    const { code, output } = await run(["scripts/cluster.ts"], {
      ADMIN_TOKEN: "admin_test",
      SESSION_SECRET: "dev-only-session-secret-not-for-production",
    });
    expect(code).toBe(1);
    expect(output).toMatch(/ADMIN_TOKEN: is a known development default/);
    expect(output).toMatch(/SESSION_SECRET: is a known development default/);
  });
});

describe(".env is read as Next reads it", () => {
  const dir = mkdtempSync(join(tmpdir(), "issue26-dotenv-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const probe = (dev: boolean) =>
    run(
      [
        "--input-type=module",
        "-e",
        `const { loadDotEnv } = await import(${JSON.stringify(join(ROOT, "scripts/lib/dotenv.ts"))});
         loadDotEnv(${dev}, ${JSON.stringify(dir)});
         console.log(JSON.stringify([process.env.APP_ENV, process.env.ADMIN_TOKEN, process.env.PORT]));`,
      ],
      // Not Vitest's NODE_ENV=test, under which Next reads .env.test instead.
      { PORT: "3999", NODE_ENV: "" },
    );

  it("production commands read .env and .env.production, development ones .env.development; the shell wins", async () => {
    writeFileSync(join(dir, ".env"), "APP_ENV=production\nADMIN_TOKEN=from-dot-env\nPORT=1234\n");
    writeFileSync(join(dir, ".env.production"), "ADMIN_TOKEN=from-dot-env-production\n");
    writeFileSync(join(dir, ".env.development"), "ADMIN_TOKEN=from-dot-env-development\n");
    const production = await probe(false);
    expect(production.code).toBe(0);
    expect(JSON.parse(production.output.trim().split("\n").at(-1) ?? "")).toEqual([
      "production",
      "from-dot-env-production",
      "3999",
    ]);
    const development = await probe(true);
    expect(JSON.parse(development.output.trim().split("\n").at(-1) ?? "")).toEqual([
      "production",
      "from-dot-env-development",
      "3999",
    ]);
  });
});
