import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { expect, test } from "@playwright/test";
import { findBinary } from "../scripts/lib/debian-package";
import { freePort } from "../scripts/lib/guarded-process";

/**
 * `npm run cluster` as a user runs it, on the production build the suite already made: two
 * `next start` instances through PgBouncer behind HAProxy, against the suite's database and
 * provider. Needs Debian's pgbouncer and haproxy (CI installs them).
 */
const missing = (["pgbouncer", "haproxy"] as const).filter((t) => !findBinary(t));
const required = process.env.TEST_POOLER === "pgbouncer";

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => resolve(!socket.destroy()));
    socket.once("error", () => resolve(false));
  });

test.describe("npm run cluster", () => {
  test.skip(
    missing.length > 0 && !required,
    `skipped: ${missing.join(" and ")} not installed (apt-get install -y ${missing.join(" ")})`,
  );
  let cluster: ChildProcess;
  let log = "";
  const exited = () => new Promise((r) => cluster.once("exit", (code, signal) => r(signal ?? code)));

  test("spreads payments over two instances, survives losing one, and stops everything on exit", async ({
    request,
  }) => {
    test.setTimeout(180_000);
    const port = await freePort();
    const firstInstance = await freePort();
    cluster = spawn("npm", ["run", "cluster"], {
      env: {
        ...process.env,
        // The suite's database, reached directly: the cluster puts its own PgBouncer in front.
        DATABASE_URL: process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL,
        DIRECT_DATABASE_URL: "",
        CHECKOUT_INSTANCE: "test",
        // The cluster is production by default; this test pays as the demo customer.
        APP_ENV: "development",
        PORT: String(port),
        CLUSTER_INSTANCES: "2",
        CLUSTER_INSTANCE_PORT: String(firstInstance),
        PGBOUNCER_PORT: "0",
        PROVIDER_PORT: "0", // used only when no PAYMENT_PROVIDER_URL is given
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, so the test can press Ctrl-C on it
    });
    const collect = (d: Buffer) => {
      log += d.toString();
    };
    cluster.stdout?.on("data", collect);
    cluster.stderr?.on("data", collect);
    let gone = false;
    cluster.once("exit", () => {
      gone = true;
    });
    await expect
      .poll(() => (gone ? "exited" : /cluster ready/.test(log) ? "ready" : "starting"), { timeout: 120_000 })
      .toBe("ready");
    const base = `http://127.0.0.1:${port}`;
    const pgbouncerPort = Number(/PgBouncer \(transaction mode\) on port (\d+)/.exec(log)?.[1]);

    const servedBy = async () => (await request.get(`${base}/api/health`)).headers()["x-served-by"] ?? "none";
    expect(new Set(await Promise.all([1, 2, 3, 4].map(servedBy)))).toEqual(new Set(["app1", "app2"]));

    // One payment, its key sent to both instances in turn: one charge, then replays.
    const auth = { authorization: "Bearer sk_test_alice" };
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
    const pid2 = Number(/instance 2: pid (\d+)/.exec(log)?.[1]);
    process.kill(pid2, "SIGKILL");
    await expect.poll(() => log).toMatch(/instance 2 on port \d+ exited \(SIGKILL\)/);
    const after = await Promise.all([1, 2, 3, 4].map(() => request.get(`${base}/api/health`)));
    expect(after.map((r) => [r.status(), r.headers()["x-served-by"]])).toEqual(
      [1, 2, 3, 4].map(() => [200, "app1"]),
    );

    // Ctrl-C: SIGINT to the whole foreground process group, npm and the command alike.
    const done = exited();
    process.kill(-(cluster.pid as number), "SIGINT");
    await done;
    await expect.poll(() => log, { timeout: 30_000 }).toMatch(/cluster stopped/);
    for (const p of [port, firstInstance, firstInstance + 1, pgbouncerPort])
      expect(await accepts(p), `port ${p} still open`).toBe(false);
  });

  test.afterAll(() => {
    if (cluster?.pid && cluster.exitCode === null && cluster.signalCode === null)
      process.kill(-cluster.pid, "SIGINT");
  });
});
