import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import type { APIRequestContext } from "@playwright/test";
import { findBinary } from "../scripts/lib/debian-package";
import { freePort } from "../scripts/lib/guarded-process";
import { expect, apiTest as test } from "./fixtures";

/**
 * `npm run cluster` as a user runs it, on the production build the suite already made: `next
 * start` instances and the API tier through PgBouncer behind HAProxy, against the suite's
 * database and provider. Needs Debian's pgbouncer and haproxy (CI installs them).
 */
const missing = (["pgbouncer", "haproxy"] as const).filter((t) => !findBinary(t));
const required = process.env.TEST_POOLER === "pgbouncer";

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => resolve(!socket.destroy()));
    socket.once("error", () => resolve(false));
  });

interface Cluster {
  base: string;
  ports: number[];
  log(): string;
  pid(name: string): number;
  port(name: string): number;
  /** Ctrl-C: SIGINT to the whole foreground process group, npm and the command alike. */
  interrupt(): Promise<void>;
}

const clusters: ChildProcess[] = [];

async function startCluster(env: Record<string, string>): Promise<Cluster> {
  const port = await freePort();
  const firstInstance = await freePort();
  const cluster = spawn("npm", ["run", "cluster"], {
    env: {
      ...process.env,
      // The suite's database, reached directly: the cluster puts its own PgBouncer in front.
      DATABASE_URL: process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL,
      DIRECT_DATABASE_URL: "",
      CHECKOUT_INSTANCE: "test",
      // The cluster is production by default; these tests pay as the demo customer.
      APP_ENV: "development",
      PORT: String(port),
      CLUSTER_INSTANCE_PORT: String(firstInstance),
      PGBOUNCER_PORT: "0",
      PROVIDER_PORT: "0", // used only when no PAYMENT_PROVIDER_URL is given
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, so the test can press Ctrl-C on it
  });
  clusters.push(cluster);
  let log = "";
  const collect = (d: Buffer) => {
    log += d.toString();
  };
  cluster.stdout?.on("data", collect);
  cluster.stderr?.on("data", collect);
  let gone = false;
  const exited = new Promise((r) => cluster.once("exit", (code, signal) => r(signal ?? code)));
  void exited.then(() => {
    gone = true;
  });
  await expect
    .poll(() => (gone ? `exited:\n${log}` : /cluster ready/.test(log) ? "ready" : "starting"), {
      timeout: 120_000,
    })
    .toBe("ready");
  const pgbouncerPort = Number(/PgBouncer \(transaction mode\) on port (\d+)/.exec(log)?.[1]);
  const started = (name: string) => new RegExp(`^${name}: pid (\\d+), port (\\d+)$`, "m").exec(log);
  const instances = [...log.matchAll(/^(?:api )?instance \d+: pid \d+, port (\d+)$/gm)].map((m) =>
    Number(m[1]),
  );
  return {
    base: `http://127.0.0.1:${port}`,
    ports: [port, pgbouncerPort, ...instances],
    log: () => log,
    pid: (name) => Number(started(name)?.[1]),
    port: (name) => Number(started(name)?.[2]),
    async interrupt() {
      process.kill(-(cluster.pid as number), "SIGINT");
      await exited;
      await expect.poll(() => log, { timeout: 30_000 }).toMatch(/cluster stopped/);
    },
  };
}

async function expectAllClosed(ports: number[]) {
  for (const p of ports) expect(await accepts(p), `port ${p} still open`).toBe(false);
}

const servedBy = async (request: APIRequestContext, url: string) =>
  (await request.get(url)).headers()["x-served-by"] ?? "none";

const auth = { authorization: "Bearer sk_test_alice" };

test.describe("npm run cluster", () => {
  test.skip(
    missing.length > 0 && !required,
    `skipped: ${missing.join(" and ")} not installed (apt-get install -y ${missing.join(" ")})`,
  );
  test.afterAll(() => {
    for (const c of clusters)
      if (c.pid && c.exitCode === null && c.signalCode === null) process.kill(-c.pid, "SIGINT");
  });

  test("without an API tier: spreads payments over two instances, survives losing one, and stops everything on exit", async ({
    request,
  }) => {
    test.setTimeout(180_000);
    const cluster = await startCluster({ CLUSTER_INSTANCES: "2", CLUSTER_API_INSTANCES: "0" });
    const { base } = cluster;
    const health = () => servedBy(request, `${base}/api/health`);
    expect(new Set(await Promise.all([1, 2, 3, 4].map(health)))).toEqual(new Set(["app1", "app2"]));

    // One payment, its key sent to both instances in turn: one charge, then replays.
    const order = await request.post(`${base}/api/trpc/orders.create`, {
      headers: auth,
      data: { items: [{ sku: "MUG-ENAMEL", quantity: 1 }] },
    });
    const orderId = (await order.json()).result.data.id as string;
    const key = randomUUID();
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const res = await request.post(`${base}/api/trpc/payments.create`, {
        headers: { ...auth, "idempotency-key": key },
        data: { orderId, paymentMethod: "pm_card_visa" },
      });
      answers.push([res.status(), res.headers()["x-served-by"], res.headers()["idempotent-replayed"] ?? "-"]);
    }
    expect(answers.map((a) => a[0])).toEqual([200, 200, 200, 200]);
    expect(answers.map((a) => a[2])).toEqual(["-", "true", "true", "true"]);
    expect(new Set(answers.map((a) => a[1]))).toEqual(new Set(["app1", "app2"]));

    // SIGKILL instance 2: HAProxy sends everything to instance 1 from the next request on.
    process.kill(cluster.pid("instance 2"), "SIGKILL");
    await expect.poll(() => cluster.log()).toMatch(/^instance 2 on port \d+ exited \(SIGKILL\)/m);
    const after = await Promise.all([1, 2, 3, 4].map(() => request.get(`${base}/api/health`)));
    expect(after.map((r) => [r.status(), r.headers()["x-served-by"]])).toEqual(
      [1, 2, 3, 4].map(() => [200, "app1"]),
    );

    await cluster.interrupt();
    await expectAllClosed(cluster.ports);
  });
  test("with the API tier: the checkout pays through it, and a SIGKILLed API instance changes nothing", async ({
    browser,
    request,
    shop,
  }) => {
    test.setTimeout(240_000);
    // A short lease: an attempt cut by the kill may be taken over after 3 s, not 30.
    const cluster = await startCluster({
      CLUSTER_INSTANCES: "1",
      CLUSTER_API_INSTANCES: "2",
      PAYMENT_LEASE_SECONDS: "3",
    });
    const { base } = cluster;
    // One origin: pages from Next, everything under /api/ from the API tier, both health-checked.
    const health = () => servedBy(request, `${base}/api/health`);
    expect(new Set(await Promise.all([1, 2, 3, 4].map(health)))).toEqual(new Set(["api1", "api2"]));
    expect(await servedBy(request, `${base}/signin`)).toBe("app1");

    // The shopper's checkout in a browser: its tRPC calls reach the API tier.
    const context = await browser.newContext({ baseURL: base });
    const page = await context.newPage();
    const servers: string[] = [];
    page.on("response", (r) => {
      if (new URL(r.url()).pathname === "/api/trpc/payments.create")
        servers.push(r.headers()["x-served-by"] ?? "");
    });
    await page.goto("/signin");
    await page.getByRole("button", { name: "Alice Martin" }).click();
    await expect(page.getByText(/^Signed in as /)).toBeVisible();
    await page.goto("/");
    await page
      .getByRole("list", { name: "Products" })
      .getByRole("listitem")
      .nth(0)
      .getByRole("button", { name: /^Add to cart/ })
      .click();
    await page.getByRole("link", { name: /^Cart/ }).click();
    await page.getByRole("button", { name: "Proceed to checkout" }).click();
    await page.waitForURL(/\/checkout\?order=/);
    const checkoutOrder = new URL(page.url()).searchParams.get("order") ?? "";
    await page.getByRole("button", { name: /^Pay / }).click();
    await expect(page.getByRole("heading", { name: "Payment complete" })).toBeVisible({ timeout: 15_000 });
    expect(servers.length).toBeGreaterThan(0);
    for (const server of servers) expect(server).toMatch(/^api[12]$/);
    const paid = await shop.trail(checkoutOrder);
    expect(paid.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
    await context.close();

    // A slow payment sent to API instance 2 itself, SIGKILLed while the charge is out: the
    // shopper's retries with the same key go through HAProxy to instance 1 and end paid, once.
    const order = await request.post(`${base}/api/trpc/orders.create`, {
      headers: auth,
      data: { items: [{ sku: "MUG-ENAMEL", quantity: 1 }] },
    });
    const orderId = (await order.json()).result.data.id as string;
    const key = randomUUID();
    const pay = (url: string) =>
      request.post(`${url}/api/trpc/payments.create`, {
        headers: { ...auth, "idempotency-key": key },
        data: { orderId, paymentMethod: "pm_card_slow" },
        failOnStatusCode: false,
      });
    const cut = pay(`http://127.0.0.1:${cluster.port("api instance 2")}`).then(
      (r) => r.status(),
      () => "cut",
    );
    await new Promise((r) => setTimeout(r, 700));
    process.kill(cluster.pid("api instance 2"), "SIGKILL");
    expect(await cut).toBe("cut");
    await expect.poll(() => cluster.log()).toMatch(/^api instance 2 on port \d+ exited \(SIGKILL\)/m);
    const answers: [number, string][] = [];
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const res = await pay(base);
      answers.push([res.status(), res.headers()["x-served-by"] ?? ""]);
      if (res.status() === 200) break;
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers()["retry-after"] ?? 1)));
    }
    expect(answers.at(-1)?.[0]).toBe(200);
    // Only 409 (the key still held by the dead attempt) or a 503 came before it, never a 5xx of ours.
    for (const [status] of answers.slice(0, -1)) expect([409, 503]).toContain(status);
    const again = await pay(base);
    expect([again.status(), again.headers()["idempotent-replayed"], again.headers()["x-served-by"]]).toEqual([
      200,
      "true",
      "api1",
    ]);
    const trail = await shop.trail(orderId);
    expect(trail.payments.filter((p) => p.status === "succeeded")).toHaveLength(1);
    expect(trail.charges.filter((c) => c.status === "succeeded")).toHaveLength(1);
    expect(trail.ledgerTransactions).toBe(1);

    await cluster.interrupt();
    await expectAllClosed(cluster.ports);
  });
});
