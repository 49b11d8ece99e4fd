import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../server/auth/tokens";
import { createPrismaClient } from "../server/db";
import { applyMigrations } from "../server/db/migrate";
import { demoProducts } from "../server/seed";
import { createScratchDatabase } from "../server/test/fixtures";
import { freePort } from "./lib/guarded-process";

const ROOT = new URL("..", import.meta.url).pathname;

// `npm run start:api` as an operator runs it: production (real secrets, an sk_live_ key), its stack
// started by the launcher (here on a database of its own, with the simulator it starts).
let launcher: ChildProcess;
let output = "";
let base: string;
let drop: () => Promise<void>;
const token = `sk_live_${randomBytes(32).toString("base64url")}`;

beforeAll(async () => {
  // The launcher runs the bundle (dist/api.mjs): made from this tree, not an earlier build's.
  execFileSync(process.execPath, ["--import", "tsx", "scripts/build-dist.ts"], {
    cwd: ROOT,
    stdio: "ignore",
  });
  const scratch = await createScratchDatabase("start_api");
  drop = scratch.drop;
  await applyMigrations(scratch.url);
  const prisma = createPrismaClient(scratch.url);
  await prisma.product.createMany({ data: demoProducts() });
  await prisma.account.create({
    data: {
      id: randomUUID(),
      handle: "start_api",
      name: "Start API",
      email: "start-api@example.test",
      apiTokens: { create: { id: randomUUID(), tokenHash: hashToken(token), label: "test" } },
    },
  });
  await prisma.$disconnect();
  const port = await freePort();
  // The shell's stage and secrets are not inherited: this start is production by default.
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env))
    if (/^(APP_ENV|NODE_ENV|METRICS_TOKEN|DIRECT_DATABASE_URL|PAYMENT_PROVIDER_\w+|LOG_LEVEL)$/.test(name))
      delete env[name];
  Object.assign(env, {
    DATABASE_URL: scratch.url,
    PORT: String(port),
    HOSTNAME: "127.0.0.1",
    PROVIDER_PORT: "0",
    ADMIN_TOKEN: randomBytes(32).toString("base64url"),
    SESSION_SECRET: randomBytes(32).toString("base64url"),
    SHUTDOWN_DELAY_SECONDS: "2",
  });
  launcher = spawn(process.execPath, ["--import", "tsx", "scripts/start-api.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`start:api did not start:\n${output}`)), 60_000);
    const read = (d: Buffer) => {
      output += String(d);
      const ready = /api listening on (http:\/\/\S+)/.exec(output);
      if (ready?.[1]) {
        clearTimeout(timer);
        resolve(ready[1]);
      }
    };
    launcher.stdout?.on("data", read);
    launcher.stderr?.on("data", read);
    launcher.once("exit", (code) => reject(new Error(`start:api exited with ${code}:\n${output}`)));
  });
}, 90_000);

afterAll(async () => {
  if (launcher && launcher.exitCode === null && launcher.signalCode === null) launcher.kill("SIGKILL");
  await drop?.();
});

const post = (path: string, body: string, headers: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body,
  });

describe("npm run start:api", () => {
  it("runs the production bundle, node dist/api.mjs, not the source under tsx", () => {
    const children = readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, "utf8")
      .split(" ")
      .filter(Boolean)
      .map((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" "));
    expect(children.find((c) => c.includes("dist/api.mjs"))).toBeDefined();
    expect(children.join("\n")).not.toMatch(/scripts\/api\.ts/);
  });

  it("serves a payment, once, with the API's headers", async () => {
    const order = await post(
      "/api/v1/orders",
      JSON.stringify({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] }),
      {},
    );
    expect(order.status).toBe(200);
    const { id: orderId } = (await order.json()) as { id: string };
    const key = randomUUID();
    const body = JSON.stringify({ orderId, paymentMethod: "pm_card_visa" });
    const paid = await post("/api/trpc/payments.create", body, { "idempotency-key": key });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("x-request-id")).toBeTruthy();
    expect(paid.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(paid.headers.get("x-content-type-options")).toBe("nosniff");
    const again = await post("/api/trpc/payments.create", body, { "idempotency-key": key });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await paid.text());
  });

  it("refuses a cross-site call and a body over the cap, before the procedure runs", async () => {
    const crossSite = await fetch(`${base}/api/trpc/account.me`, {
      method: "POST",
      headers: {
        cookie: "checkout.session_token=x",
        origin: "https://evil.example",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(crossSite.status).toBe(403);
    const form = await post("/api/trpc/payments.create", "orderId=x", {
      "content-type": "application/x-www-form-urlencoded",
      "idempotency-key": randomUUID(),
    });
    expect(form.status).toBe(415);
    const huge = JSON.stringify({ orderId: "x".repeat(70 * 1024), paymentMethod: "pm_card_visa" });
    const declared = await post("/api/v1/payments", huge, { "idempotency-key": randomUUID() });
    expect(declared.status).toBe(413);
    // Without a declared length (chunked): counted as it is read.
    const chunked = await fetch(`${base}/api/trpc/payments.create`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "idempotency-key": randomUUID(),
      },
      body: new Blob([huge]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it("stops in order on SIGTERM: readiness 503 while draining, then exit 0 with its stack", async () => {
    const exited = new Promise<number | null>((resolve) => launcher.once("exit", (code) => resolve(code)));
    launcher.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    const ready = await fetch(`${base}/api/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", stopping: true });
    expect(await exited).toBe(0);
    expect(output).toMatch(/closing the listener, finishing requests in flight/);
    expect(output).toMatch(/stopped: payment provider/);
  }, 30_000);
});
