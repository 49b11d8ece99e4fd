import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { db } from "../db";
import { env } from "../env";
import { metricsResponse } from "../http/metrics";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { createTestOrder } from "../test/payments";
import { postPayment, startApiProcess } from "../test/processes";
import { it, type TestProvider } from "../test/vitest";

let provider: TestProvider;
let account: TestAccount;
it.beforeAll(async ({ provider: running }) => {
  provider = running;
  account = await createTestAccount("metrics-procs");
});

async function outcomes(): Promise<Record<string, number>> {
  const res = await metricsResponse(
    new Request("http://app.test/api/metrics", { headers: { authorization: `Bearer ${env.METRICS_TOKEN}` } }),
    db(),
  );
  const text = await res.text();
  return Object.fromEntries(
    [...text.matchAll(/^idempotency_outcomes_total\{outcome="(\w+)"\} (\d+)$/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  );
}

it("a scrape counts the idempotency outcomes of another server process", async () => {
  const started = Date.now();
  const before = await outcomes();
  const apiEnv = { DATABASE_URL: process.env.DATABASE_URL ?? "", PAYMENT_PROVIDER_URL: provider.url };
  const api = await startApiProcess(apiEnv);
  try {
    for (let i = 0; i < 2; i++) {
      const order = await createTestOrder(account);
      const body = { orderId: order.id, paymentMethod: "pm_card_visa" };
      const key = randomUUID();
      expect((await postPayment(api.url, account.token, key, body)).status).toBe(200);
      expect((await postPayment(api.url, account.token, key, body)).status).toBe(200);
    }
  } finally {
    // It flushes its counts once more as it stops: nothing counted is lost with the process.
    const stopping = Date.now();
    await api.stop();
    console.info(
      `[metrics] api process up, 4 payments: ${stopping - started} ms; stop: ${Date.now() - stopping} ms`,
    );
  }
  const after = await outcomes();
  // Other test files share the database: at least this file's outcomes, never fewer.
  const added = (outcome: string) => (after[outcome] ?? 0) - (before[outcome] ?? 0);
  expect([added("claimed"), added("completed"), added("replayed")].map((n) => n >= 2)).toEqual([
    true,
    true,
    true,
  ]);
});
