import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, memoryStore } from "@idempotent-checkout/client";
import { expect, test } from "@playwright/test";
import { type CheckoutServer, startCheckoutServer } from "./client/checkout-server";
import { type FaultPlan, startFaultProxy } from "./client/fault-proxy";

/**
 * The client SDK (packages/client) against `npm start` and a provider of the test's own: a payer
 * process killed between sending and receiving, a retry storm through a fault proxy, final
 * answers left alone. "One charge" is read from the provider, not from the app.
 */
let server: CheckoutServer;
test.beforeAll(async () => {
  test.setTimeout(180_000);
  server = await startCheckoutServer();
});
test.afterAll(async () => {
  await server?.stop();
});

const isPayment = (path: string) => path.startsWith("/api/v1/payments");

async function newOrder(): Promise<string> {
  const client = createClient({ baseUrl: server.url, apiKey: "sk_test_alice", store: memoryStore() });
  return (await client.orders.create({ items: [{ sku: "TEE-CLASSIC", quantity: 1 }] })).id;
}

function runPayer(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, ["e2e/client/payer.mjs", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  return { child, exited, output: () => ({ stdout, stderr }) };
}

/** The last line a payer printed, parsed. */
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) ?? "null");

const storedIntents = async (dir: string) =>
  Promise.all(
    (await readdir(dir))
      .filter((f) => f.endsWith(".json"))
      .map(
        async (f) => JSON.parse(await readFile(join(dir, f), "utf8")) as { intentId: string; key: string },
      ),
  );

test.describe("the client SDK", () => {
  test("a payer killed after the server charged but before the answer arrived resumes with the same key: one charge", async () => {
    const orderId = await newOrder();
    const intentId = `payout-${randomUUID()}`;
    const store = await mkdtemp(join(tmpdir(), "sdk-intents-"));
    // The payment reaches the server and is answered, but the answer never reaches the payer.
    const proxy = await startFaultProxy(server.url, ({ path }) => (isPayment(path) ? { after: "hold" } : {}));
    try {
      const payer = runPayer(["pay", proxy.url, store, orderId, intentId]);
      const held = await proxy.held;
      expect(held.upstreamStatus).toBe(200);
      payer.child.kill("SIGKILL");
      expect(await payer.exited).toBe("SIGKILL");
      expect(payer.output().stdout).not.toContain('"payment"');

      // The intent and its key were on disk before the attempt left, and still are.
      const [intent, ...others] = await storedIntents(store);
      expect(others).toEqual([]);
      expect(intent).toMatchObject({ intentId, key: held.idempotencyKey });
      expect(await server.chargesFor(orderId)).toHaveLength(1);

      const restarted = runPayer(["resume", server.url, store]);
      expect(await restarted.exited, restarted.output().stderr).toBe(0);
      const { outcomes } = lastJson(restarted.output().stdout);
      expect(outcomes).toEqual([
        {
          intentId,
          ok: true,
          payment: expect.objectContaining({ orderId, status: "succeeded", replayed: true, intentId }),
        },
      ]);
      const charges = await server.chargesFor(orderId);
      expect(charges).toHaveLength(1);
      expect(charges[0]?.id).toBe(outcomes[0].payment.providerChargeId);
      // The intent keeps its answer: a payer that dies again before it records the answer asks
      // with the same intent id and is told the same payment, not "order already paid".
      expect(await storedIntents(store)).toMatchObject([{ intentId, answer: { status: 200 } }]);
      const again = runPayer(["pay", server.url, store, orderId, intentId]);
      expect(await again.exited, again.output().stderr).toBe(0);
      expect(lastJson(again.output().stdout).payment).toMatchObject({
        id: outcomes[0].payment.id,
        status: "succeeded",
        intentId,
      });
      expect(await server.chargesFor(orderId)).toHaveLength(1);
    } finally {
      await proxy.stop();
      await rm(store, { recursive: true, force: true });
    }
  });

  test("a payer killed while the server still runs its payment resumes, waits out the 409s, and gets the one charge", async () => {
    const orderId = await newOrder();
    const intentId = `payout-${randomUUID()}`;
    const store = await mkdtemp(join(tmpdir(), "sdk-intents-"));
    let sent: () => void = () => {};
    const forwarded = new Promise<void>((resolve) => {
      sent = resolve;
    });
    // pm_card_slow: the provider takes about 2 s, so the first request is still running when
    // the payer dies and when the restarted one asks again.
    const first = await startFaultProxy(server.url, ({ path }) => {
      if (isPayment(path)) setTimeout(sent, 200);
      return {};
    });
    const watch = await startFaultProxy(server.url, () => ({}));
    try {
      const payer = runPayer(["pay", first.url, store, orderId, intentId, "pm_card_slow"]);
      await forwarded;
      payer.child.kill("SIGKILL");
      await payer.exited;
      expect(await storedIntents(store)).toHaveLength(1);

      const restarted = runPayer(["resume", watch.url, store]);
      expect(await restarted.exited, restarted.output().stderr).toBe(0);
      const { outcomes } = lastJson(restarted.output().stdout);
      expect(outcomes[0]).toMatchObject({
        ok: true,
        payment: { orderId, status: "succeeded", replayed: true },
      });
      // The resumed payer was told the first request was still running, and waited as asked.
      const statuses = watch.attempts.filter((a) => isPayment(a.path)).map((a) => a.upstreamStatus);
      expect(statuses[0]).toBe(409);
      expect(statuses.at(-1)).toBe(200);
      expect(new Set(watch.attempts.map((a) => a.idempotencyKey)).size).toBe(1);
      expect(await server.chargesFor(orderId)).toHaveLength(1);
      expect(await storedIntents(store)).toMatchObject([{ intentId, answer: { status: 200 } }]);
    } finally {
      await first.stop();
      await watch.stop();
      await rm(store, { recursive: true, force: true });
    }
  });

  test("a retry storm through a fault proxy (5xx, resets before and after the server ran, 429, latency): every order charged once", async () => {
    test.setTimeout(120_000);
    const orders = await Promise.all(Array.from({ length: 12 }, () => newOrder()));
    // A fixed cycle, so every run meets every fault; one in seven attempts passes untouched.
    const cycle: FaultPlan[] = [
      { before: { status: 503 } },
      { after: "reset" },
      { before: "reset" },
      { after: { status: 502 } },
      { before: { status: 429, retryAfter: 1 } },
      { latencyMs: 300, after: { status: 500 } },
      {},
    ];
    const proxy = await startFaultProxy(server.url, ({ path, n }) =>
      isPayment(path) ? (cycle[n % cycle.length] ?? {}) : {},
    );
    const store = memoryStore();
    const client = createClient({
      baseUrl: proxy.url,
      apiKey: "sk_test_alice",
      store,
      retry: { baseDelayMs: 50, maxDelayMs: 1000, deadlineMs: 60_000 },
    });
    try {
      const payments = await Promise.all(
        orders.map((orderId) => client.payments.create({ orderId, paymentMethod: "pm_card_visa" })),
      );
      expect(payments.map((p) => p.status)).toEqual(orders.map(() => "succeeded"));
      expect(payments.map((p) => p.orderId)).toEqual(orders);
      for (const orderId of orders) expect(await server.chargesFor(orderId), orderId).toHaveLength(1);
      // Each intent is kept with its payment until the caller forgets it.
      const kept = await store.list();
      expect(kept.map((i) => i.answer?.status)).toEqual(orders.map(() => 200));
      expect(new Set(kept.map((i) => (i.answer?.body as { id?: string } | undefined)?.id))).toEqual(
        new Set(payments.map((p) => p.id)),
      );

      const attempts = proxy.attempts.filter((a) => isPayment(a.path));
      // A storm: every payment needed retries, each intent kept its one key.
      expect(attempts.length).toBeGreaterThan(2 * orders.length);
      expect(new Set(attempts.map((a) => a.idempotencyKey)).size).toBe(orders.length);
      // The server ran some requests whose answers were lost: their retries were replays.
      expect(payments.some((p) => p.replayed)).toBe(true);
      // After an injected 429 with Retry-After: 1, that key's next attempt waited at least 1 s.
      const waited = attempts.flatMap((a, i) => {
        if (typeof a.plan.before !== "object" || a.plan.before.status !== 429) return [];
        const next = attempts.slice(i + 1).find((b) => b.idempotencyKey === a.idempotencyKey);
        return next ? [next.at - a.at] : [];
      });
      expect(waited.length).toBeGreaterThan(0);
      for (const ms of waited) expect(ms).toBeGreaterThanOrEqual(1000);
      console.log(
        `storm: ${orders.length} payments, ${attempts.length} attempts, ${payments.filter((p) => p.replayed).length} replayed`,
      );
    } finally {
      await proxy.stop();
    }
  });

  test("final answers are never retried and stay with their intent until forgotten; a deadline keeps it for resume()", async () => {
    const proxy = await startFaultProxy(server.url, () => ({}));
    const store = memoryStore();
    const client = createClient({ baseUrl: proxy.url, apiKey: "sk_test_alice", store });
    const paymentAttempts = () => proxy.attempts.filter((a) => isPayment(a.path)).length;
    try {
      // 402: a declined card, with the problem's fields on the typed error.
      const declinedOrder = await newOrder();
      const sentBefore = paymentAttempts();
      const declined = await client.payments
        .create({ orderId: declinedOrder, paymentMethod: "pm_card_declined" }, { intentId: "declined" })
        .catch((e: unknown) => e);
      expect(client.isError(declined)).toBe(true);
      expect(declined).toMatchObject({
        code: "card-declined",
        status: 402,
        final: true,
        intentId: "declined",
        problem: { status: 402, declineCode: expect.any(String), paymentId: expect.any(String) },
      });
      expect(paymentAttempts() - sentBefore).toBe(1);

      // 422: a stored intent whose key the server saw with another order.
      const [a, b] = [await newOrder(), await newOrder()];
      const paid = await client.payments.create({ orderId: a, paymentMethod: "pm_card_visa" });
      await store.create({
        intentId: "reused",
        key: proxy.attempts.at(-1)?.idempotencyKey ?? "",
        request: { operation: "payments.create", body: { orderId: b, paymentMethod: "pm_card_visa" } },
        createdAt: new Date().toISOString(),
      });
      const before = proxy.attempts.length;
      // resume() also reports the answers kept with "declined" and the paid intent, without a request.
      const outcomes = await client.resume();
      expect(outcomes.map((o) => o.ok)).toEqual([false, true, false]);
      const outcome = outcomes.find((o) => o.intentId === "reused");
      expect(outcome).toMatchObject({
        intentId: "reused",
        ok: false,
        error: { code: "idempotency-key-reused", status: 422 },
      });
      expect(proxy.attempts.length - before).toBe(1);
      expect(paid.replayed).toBe(false);

      // 400: an invalid request.
      const sentBeforeInvalid = paymentAttempts();
      const invalid = await client.payments
        .create({ orderId: "not-a-uuid", paymentMethod: "pm_card_visa" })
        .catch((e: unknown) => e);
      expect(invalid).toMatchObject({ code: "invalid-request", status: 400, final: true });
      expect(paymentAttempts() - sentBeforeInvalid).toBe(1);
      // Each final answer is kept with its intent; the same id is answered without a request.
      const kept = await store.list();
      expect(kept.map((i) => i.answer?.status).sort()).toEqual([200, 400, 402, 422]);
      const sentBeforeAgain = paymentAttempts();
      const again = await client.payments
        .create({ orderId: declinedOrder, paymentMethod: "pm_card_declined" }, { intentId: "declined" })
        .catch((e: unknown) => e);
      expect(again).toMatchObject({ code: "card-declined", status: 402, final: true });
      expect(paymentAttempts()).toBe(sentBeforeAgain);
      for (const intent of kept) await client.forget(intent.intentId);
      expect(await store.list()).toEqual([]);
    } finally {
      await proxy.stop();
    }

    // Only 503s until the deadline: the outcome is unknown, so the intent stays for resume().
    const down = await startFaultProxy(server.url, ({ path }) =>
      isPayment(path) ? { before: { status: 503 } } : {},
    );
    try {
      const orderId = await newOrder();
      const impatient = createClient({
        baseUrl: down.url,
        apiKey: "sk_test_alice",
        store,
        retry: { baseDelayMs: 50, deadlineMs: 1500 },
      });
      const late = await impatient.payments
        .create({ orderId, paymentMethod: "pm_card_visa" }, { intentId: "late" })
        .catch((e: unknown) => e);
      expect(late).toMatchObject({ code: "deadline-exceeded", final: false, intentId: "late", status: 503 });
      expect(down.attempts.length).toBeGreaterThan(1);
      expect((await store.list()).map((i) => i.intentId)).toEqual(["late"]);
      const [settled] = await createClient({ baseUrl: server.url, apiKey: "sk_test_alice", store }).resume();
      expect(settled).toMatchObject({
        intentId: "late",
        ok: true,
        payment: { orderId, status: "succeeded" },
      });
      expect(await server.chargesFor(orderId)).toHaveLength(1);
      expect(await store.list()).toMatchObject([{ intentId: "late", answer: { status: 200 } }]);
    } finally {
      await down.stop();
    }
  });
});

test('docs/api.md\'s "Try the API" SDK block, run as written with tsx: catalogue, an order, a payment, resume', async ({
  baseURL,
}) => {
  const readme = readFileSync("docs/api.md", "utf8");
  const section = readme.slice(readme.indexOf("## Try the API"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block, "docs/api.md has a ts block under Try the API").toBeTruthy();
  // Only the server's address differs from what a reader types.
  const script = (block ?? "").replace('baseUrl: "http://localhost:3000"', `baseUrl: "${baseURL}"`);
  expect(script).not.toBe(block);
  // Beside the checkout's node_modules, as `pay.ts` in the checkout would be; run in a folder of
  // its own so its store does not land in the checkout's .data/.
  const port = new URL(baseURL ?? "").port;
  const file = join(process.cwd(), "test-results", port, "readme-sdk", "pay.ts");
  await mkdir(join(file, ".."), { recursive: true });
  await writeFile(file, script);
  const cwd = await mkdtemp(join(tmpdir(), "readme-sdk-"));
  try {
    const run = spawnSync(join(process.cwd(), "node_modules/.bin/tsx"), [file], {
      cwd,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const [skus, paid, resumed] = run.stdout.trim().split("\n");
    expect(skus).toContain("TEE-CLASSIC");
    expect(paid).toBe("succeeded 2500 EUR replayed=false");
    expect(resumed).toBe("resumed 0");
    // The script forgot its intent once it had the answer: the store is empty.
    expect(await readdir(join(cwd, ".data/payment-intents"))).toEqual([]);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
});
