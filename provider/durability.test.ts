import { afterAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, openDb, raw, sdk, TEST_AUTH, uniqueKey, visa } from "./test-support";

const started: ProviderProcess[] = [];
async function start(env?: Record<string, string>): Promise<ProviderProcess> {
  const p = await startProvider({ databaseUrl: databaseUrl(), env });
  started.push(p);
  return p;
}
const db = openDb();

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await db.close();
});

describe("durability", () => {
  it("PaymentIntents, their events and idempotency keys survive a restart of the process", async () => {
    const first = await start();
    const key = uniqueKey("restart");
    const params = { ...visa, metadata: { tag: key } };
    const created = await sdk(first.url).paymentIntents.create(params, { idempotencyKey: key });
    await first.stop();
    await expect(fetch(`${first.url}/health`)).rejects.toThrow();

    const second = await start();
    const stripe = sdk(second.url);
    expect(await stripe.paymentIntents.retrieve(created.id)).toEqual(created);
    const replay = await stripe.paymentIntents.create(params, { idempotencyKey: key });
    expect(replay.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(replay).toEqual(created);
    expect(await db.intentsTagged(key)).toBe(1);
    expect(await db.eventTypes(created.id)).toEqual(["payment_intent.created", "payment_intent.succeeded"]);
  }, 30_000);

  it("SIGTERM while a slow payment is in flight: the request finishes and commits before the process exits", async () => {
    const p = await start();
    const tag = uniqueKey("drain");
    const pending = sdk(p.url).paymentIntents.create({
      ...visa,
      payment_method: "pm_card_slow",
      metadata: { tag },
    });
    await new Promise((r) => setTimeout(r, 300));
    const stopStarted = performance.now();
    await p.stop();
    const stopMs = performance.now() - stopStarted;
    const pi = await pending;
    expect(pi.status).toBe("succeeded");
    expect(stopMs).toBeLessThan(5000);
    const again = await start();
    expect((await sdk(again.url).paymentIntents.retrieve(pi.id)).status).toBe("succeeded");
  }, 30_000);

  it("stop() is idempotent and a stopped provider is really gone", async () => {
    const p = await start();
    await Promise.all([p.stop(), p.stop()]);
    await p.stop();
    expect(() => process.kill(p.pid, 0)).toThrow();
  }, 20_000);
});

describe("auth: Authorization: Bearer sk_…", () => {
  it("without PROVIDER_SECRET any sk_test_ key is taken, as stripe-mock; no key or another key is 401", async () => {
    const p = await start();
    const none = await raw(p.url, "/v1/payment_intents");
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: { type: "invalid_request_error" } });
    expect(none.headers.get("stripe-should-retry")).toBe("false");
    const live = await failureOf(sdk(p.url, { key: "sk_live_somebody" }).paymentIntents.list());
    expect(live).toMatchObject({ type: "StripeAuthenticationError", statusCode: 401 });
    expect((await sdk(p.url, { key: "sk_test_anyone" }).paymentIntents.list()).object).toBe("list");
    // The scheme is case-insensitive, as RFC 9110 has it.
    expect((await raw(p.url, "/v1/events", { headers: { authorization: "bearer sk_test_x" } })).status).toBe(
      200,
    );
    expect((await raw(p.url, "/health")).status).toBe(200);
  }, 20_000);

  it("with PROVIDER_SECRET, and always in production, only that key", async () => {
    await expect(start({ APP_ENV: "production" })).rejects.toThrow(
      /PROVIDER_SECRET is required in production/,
    );
    const p = await start({ APP_ENV: "production", PROVIDER_SECRET: "sk_live_the_one_key_of_this_provider" });
    const test = await failureOf(sdk(p.url).paymentIntents.create(visa));
    expect(test).toMatchObject({ type: "StripeAuthenticationError", statusCode: 401 });
    const own = sdk(p.url, { key: "sk_live_the_one_key_of_this_provider" });
    expect((await own.paymentIntents.create(visa)).status).toBe("succeeded");
    expect((await raw(p.url, "/v1/events", { headers: TEST_AUTH })).status).toBe(401);
  }, 20_000);
});
