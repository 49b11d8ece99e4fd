import { afterAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { type Charge, type CreateChargeInput, httpProvider } from "./client";
import { databaseUrl, TEST_AUTH, uniqueKey } from "./test-support";

const started: ProviderProcess[] = [];
async function start(env?: Record<string, string>): Promise<ProviderProcess> {
  const p = await startProvider({ databaseUrl: databaseUrl(), env });
  started.push(p);
  return p;
}

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
});

const input: CreateChargeInput = { amount: 777, currency: "gbp", paymentMethod: "pm_card_visa" };

describe("durability", () => {
  it("charges and idempotency keys survive a restart of the provider process", async () => {
    const first = await start();
    const key = uniqueKey("restart");
    const created = await httpProvider({ baseUrl: first.url }).createCharge(
      { ...input, metadata: { order: "restart" } },
      key,
    );
    const declined = await httpProvider({ baseUrl: first.url }).createCharge(
      { ...input, paymentMethod: "pm_card_declined" },
      uniqueKey("restart-declined"),
    );
    await first.stop();
    await expect(fetch(`${first.url}/health`)).rejects.toThrow();

    const second = await start();
    const client = httpProvider({ baseUrl: second.url });
    expect(await client.getCharge(created.id)).toEqual(created);
    expect(await client.getCharge(declined.id)).toEqual(declined);
    // The idempotency key is durable too: the same request replays, no second charge.
    const replay = await client.createCharge({ ...input, metadata: { order: "restart" } }, key);
    expect(replay).toEqual(created);
  }, 30_000);

  it("SIGTERM while a slow charge is in flight: the request finishes and commits before the process exits", async () => {
    const p = await start();
    const key = uniqueKey("drain");
    const pending = httpProvider({ baseUrl: p.url }).createCharge(
      { ...input, paymentMethod: "pm_card_slow" },
      key,
    );
    await new Promise((r) => setTimeout(r, 300));
    const stopStarted = performance.now();
    await p.stop();
    const stopMs = performance.now() - stopStarted;
    const charge = await pending;
    expect(charge.status).toBe("succeeded");
    expect(stopMs).toBeLessThan(5000);
    console.info(`[drain] stop() with a charge in flight took ${Math.round(stopMs)} ms`);

    const again = await start();
    expect(await httpProvider({ baseUrl: again.url }).getCharge(charge.id)).toEqual(charge);
  }, 30_000);

  it("stop() is idempotent and a stopped provider is really gone", async () => {
    const p = await start();
    await Promise.all([p.stop(), p.stop()]);
    await p.stop();
    expect(() => process.kill(p.pid, 0)).toThrow();
  }, 20_000);
});

describe("listing", () => {
  it("listCharges walks multiple pages in (created_at, id) order without gaps or duplicates", async () => {
    const p = await start();
    const since = new Date(Date.now() - 1000);
    const writer = httpProvider({ baseUrl: p.url });
    const mine: Charge[] = [];
    for (let i = 0; i < 23; i++) {
      mine.push(await writer.createCharge({ ...input, metadata: { i: String(i) } }, uniqueKey(`page-${i}`)));
    }

    // Page size 5 → at least 5 pages; other test files may add charges meanwhile, which is fine.
    const seen: Charge[] = [];
    for await (const charge of httpProvider({ baseUrl: p.url, pageSize: 5 }).listCharges({
      createdGte: since,
    })) {
      seen.push(charge);
    }
    const ids = seen.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const charge of mine) expect(ids).toContain(charge.id);
    expect(seen.length).toBeGreaterThanOrEqual(23);
    expect(seen.every((c) => c.createdAt >= since.toISOString())).toBe(true);
    const sorted = [...seen].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
    );
    expect(seen).toEqual(sorted);

    // The raw pages: limit honoured, has_more set until the end, cursor continues after the given id.
    const page1 = await listPage(p.url, `limit=5&created_gte=${since.toISOString()}`);
    expect(page1.data).toHaveLength(5);
    expect(page1.has_more).toBe(true);
    const page2 = await listPage(
      p.url,
      `limit=5&created_gte=${since.toISOString()}&starting_after=${page1.data[4]?.id}`,
    );
    expect(page2.data[0]?.id).toBe(ids[5]);

    // created_gte in the future → empty; an unknown cursor → 400.
    expect(
      (await listPage(p.url, `created_gte=${new Date(Date.now() + 3_600_000).toISOString()}`)).data,
    ).toEqual([]);
    expect(
      (await fetch(`${p.url}/v1/charges?starting_after=ch_doesnotexist`, { headers: TEST_AUTH })).status,
    ).toBe(400);
    expect((await fetch(`${p.url}/v1/charges?limit=101`, { headers: TEST_AUTH })).status).toBe(400);
  }, 30_000);
});

describe("auth", () => {
  it("refuses a call without a key, or with a key that is no sk_test_ key, when no secret is set", async () => {
    const p = await start();
    expect((await fetch(`${p.url}/v1/charges`)).status).toBe(401);
    const notTest = { authorization: "Bearer sk_live_somebody" };
    expect((await fetch(`${p.url}/v1/charges`, { headers: notTest })).status).toBe(401);
    expect((await fetch(`${p.url}/v1/charges`, { headers: TEST_AUTH })).status).toBe(200);
    // The scheme is case-insensitive, as RFC 9110 has it.
    const lower = { authorization: "bearer sk_test_anyone" };
    expect((await fetch(`${p.url}/v1/charges`, { headers: lower })).status).toBe(200);
  }, 20_000);

  it("in production it does not start without PROVIDER_SECRET, and then takes only that key", async () => {
    await expect(start({ APP_ENV: "production" })).rejects.toThrow(
      /PROVIDER_SECRET is required in production/,
    );
    const p = await start({ APP_ENV: "production", PROVIDER_SECRET: "sk_live_the_one_key_of_this_provider" });
    expect((await fetch(`${p.url}/v1/charges`, { headers: TEST_AUTH })).status).toBe(401);
    const own = { authorization: "Bearer sk_live_the_one_key_of_this_provider" };
    expect((await fetch(`${p.url}/v1/charges`, { headers: own })).status).toBe(200);
  }, 20_000);

  it("with PROVIDER_SECRET set, /v1 requires the bearer token (health stays open)", async () => {
    const p = await start({ PROVIDER_SECRET: "s3cret" });
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
    expect((await fetch(`${p.url}/v1/charges`)).status).toBe(401);
    const wrong = await httpProvider({ baseUrl: p.url, secret: "nope" })
      .getCharge("ch_1")
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ kind: "rejected", status: 401 });
    const charge = await httpProvider({ baseUrl: p.url, secret: "s3cret" }).createCharge(
      input,
      uniqueKey("auth"),
    );
    expect(charge.status).toBe("succeeded");
  }, 20_000);
});

async function listPage(
  baseUrl: string,
  query: string,
): Promise<{ data: { id: string }[]; has_more: boolean }> {
  const res = await fetch(`${baseUrl}/v1/charges?${query}`, { headers: TEST_AUTH });
  expect(res.status).toBe(200);
  return (await res.json()) as { data: { id: string }[]; has_more: boolean };
}
