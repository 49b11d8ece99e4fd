import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import {
  type Charge,
  type CreateChargeInput,
  httpProvider,
  type PaymentProvider,
  ProviderError,
} from "./client";
import { databaseUrl, openDb, TEST_AUTH, uniqueKey } from "./test-support";

const input: CreateChargeInput = { amount: 4200, currency: "usd", paymentMethod: "pm_card_visa" };

let provider: ProviderProcess;
let client: PaymentProvider;
const db = openDb();

beforeAll(async () => {
  provider = await startProvider({ databaseUrl: databaseUrl() });
  client = httpProvider({ baseUrl: provider.url });
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await db.close();
});

async function chargeIdForKey(key: string): Promise<string | undefined> {
  const res = await fetch(`${provider.url}/v1/charges?idempotency_key=${encodeURIComponent(key)}`, {
    headers: TEST_AUTH,
  });
  const page = (await res.json()) as { data: { id: string }[] };
  return page.data[0]?.id;
}

describe("per-request faults (X-Provider-Fault)", () => {
  it("drop: the client sees a retryable error, yet the charge exists; a retry returns that same charge", async () => {
    const key = uniqueKey("drop");
    const error = await client.createCharge(input, key, { fault: "drop" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "unavailable", retryable: true });

    const storedId = await chargeIdForKey(key);
    expect(storedId).toMatch(/^ch_/);
    expect(await db.countCharges(key)).toBe(1);

    const retried = await client.createCharge(input, key);
    expect(retried.id).toBe(storedId);
    expect(retried.status).toBe("succeeded");
    expect(await db.countCharges(key)).toBe(1);
  });

  it("error=500: nothing stored; the retry succeeds with one charge", async () => {
    const key = uniqueKey("error500");
    const error = await client.createCharge(input, key, { fault: "error=500" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "unavailable", retryable: true, status: 500 });
    expect(await db.countCharges(key)).toBe(0);

    const retried = await client.createCharge(input, key);
    expect(retried.status).toBe("succeeded");
    expect(await db.countCharges(key)).toBe(1);
    expect(await chargeIdForKey(key)).toBe(retried.id);
  });

  it("error=503 carries Retry-After and stores nothing", async () => {
    const key = uniqueKey("error503");
    const error = await client.createCharge(input, key, { fault: "error=503" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "unavailable", retryable: true, status: 503, retryAfterMs: 1000 });
    expect(await db.countCharges(key)).toBe(0);
  });

  it("latency beyond the client timeout: a retryable timeout, the charge committed anyway, the retry replays it", async () => {
    const key = uniqueKey("latency");
    const impatient = httpProvider({ baseUrl: provider.url, timeoutMs: 300 });
    const started = performance.now();
    const error = await impatient
      .createCharge(input, key, { fault: "latency=1500" })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    expect(elapsed).toBeLessThan(1200);

    const retried = await client.createCharge(input, key);
    expect(await db.countCharges(key)).toBe(1);
    expect(await chargeIdForKey(key)).toBe(retried.id);
  });

  it("latency delays the answer by about the requested time", async () => {
    const started = performance.now();
    await client.createCharge(input, uniqueKey("latency-ok"), { fault: "latency=400" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
  });

  it("a malformed fault header → 400 rejected, nothing stored", async () => {
    const key = uniqueKey("bad-fault");
    const error = await client.createCharge(input, key, { fault: "explode" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "rejected", retryable: false, status: 400 });
    expect(await db.countCharges(key)).toBe(0);
  });

  it("faults apply to reads too when asked per request", async () => {
    expect(await client.getCharge("ch_0")).toBeNull(); // a plain miss is null, not an error
    const res = await fetch(`${provider.url}/v1/charges/ch_0`, {
      headers: { ...TEST_AUTH, "x-provider-fault": "error=503" },
    });
    expect(res.status).toBe(503);
  });
});

describe("random faults from PROVIDER_FAULTS", () => {
  let faulty: ProviderProcess;

  beforeAll(async () => {
    faulty = await startProvider({
      databaseUrl: databaseUrl(),
      env: { PROVIDER_FAULTS: "error:0.25,drop:0.25,latency:0-30" },
    });
  }, 20_000);

  afterAll(async () => {
    await faulty?.stop();
  });

  it("retrying each key until it succeeds yields exactly one charge per key", async () => {
    const flaky = httpProvider({ baseUrl: faulty.url, timeoutMs: 5000 });
    const keys = Array.from({ length: 25 }, (_, i) => uniqueKey(`soak-${i}`));
    const failures: Record<string, number> = {};

    async function chargeWithRetries(key: string): Promise<Charge> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await flaky.createCharge(input, key);
        } catch (err) {
          if (!(err instanceof ProviderError) || !err.retryable || attempt >= 40) throw err;
          const label = `${err.kind}${err.status ? `:${err.status}` : ""}`;
          failures[label] = (failures[label] ?? 0) + 1;
          await new Promise((r) => setTimeout(r, err.kind === "conflict" ? 100 : 10));
        }
      }
    }

    const charges = await Promise.all(keys.map(chargeWithRetries));
    expect(new Set(charges.map((c) => c.id)).size).toBe(keys.length);
    for (const key of keys) expect(await db.countCharges(key)).toBe(1);
    // Env faults hit charge creation only; reads stay reliable for reconciliation.
    for (const charge of charges) expect((await flaky.getCharge(charge.id))?.id).toBe(charge.id);
    expect(Object.keys(failures).length).toBeGreaterThan(0);
    console.info(`[soak] retried failures by kind: ${JSON.stringify(failures)}`);
  }, 30_000);
});
