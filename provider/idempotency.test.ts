import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { httpProvider, type PaymentProvider, ProviderError } from "./client";
import { databaseUrl, openDb, postCharge, TEST_AUTH, uniqueKey, visa } from "./test-support";

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

describe("idempotency keys", () => {
  it("same key twice → one charge; the second answer is a replay", async () => {
    const key = uniqueKey("twice");
    const first = await postCharge(
      provider.url,
      { ...visa, metadata: { order: "o-1" } },
      { "idempotency-key": key },
    );
    const second = await postCharge(
      provider.url,
      { ...visa, metadata: { order: "o-1" } },
      { "idempotency-key": key },
    );

    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.body).toMatchObject({
      status: "succeeded",
      amount: 1999,
      currency: "usd",
      metadata: { order: "o-1" },
    });
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await db.countCharges(key)).toBe(1);
  });

  it("treats currency case and metadata key order as the same parameters", async () => {
    const key = uniqueKey("canonical");
    const a = await postCharge(
      provider.url,
      { ...visa, currency: "USD", metadata: { a: "1", b: "2" } },
      { "idempotency-key": key },
    );
    const b = await postCharge(
      provider.url,
      { ...visa, metadata: { b: "2", a: "1" } },
      { "idempotency-key": key },
    );
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(b.body.id).toBe(a.body.id);
  });

  it("same key with different parameters → 422, nothing new stored", async () => {
    const key = uniqueKey("mismatch");
    const first = await postCharge(provider.url, visa, { "idempotency-key": key });
    const other = await postCharge(provider.url, { ...visa, amount: 2000 }, { "idempotency-key": key });

    expect(first.status).toBe(201);
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({
      error: { type: "idempotency_error", code: "idempotency_key_in_use" },
    });
    expect(await db.countCharges(key)).toBe(1);

    const viaClient = await client
      .createCharge({ amount: 2000, currency: "usd", paymentMethod: "pm_card_visa" }, key)
      .catch((e: unknown) => e);
    expect(viaClient).toBeInstanceOf(ProviderError);
    expect(viaClient).toMatchObject({ kind: "rejected", retryable: false, status: 422 });
  });

  it("20 concurrent requests with one key → exactly one charge; the others are replays or 409s", async () => {
    const key = uniqueKey("concurrent");
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => postCharge(provider.url, visa, { "idempotency-key": key })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 200) expect(answer.headers.get("idempotent-replayed")).toBe("true");
      else if (answer.status === 409) expect(answer.headers.get("retry-after")).toBe("1");
      else expect(answer.status).toBe(201);
    }
    const ids = new Set(answers.filter((a) => a.status < 300).map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(await db.countCharges(key)).toBe(1);
    console.info(`[concurrent] statuses: ${JSON.stringify(countBy(statuses))}`);
  });

  it("a duplicate while the first request is in flight → 409 with Retry-After: 1, then a replay", async () => {
    const key = uniqueKey("in-flight");
    const slow = { ...visa, payment_method: "pm_card_slow" };
    const first = postCharge(provider.url, slow, { "idempotency-key": key });
    await new Promise((r) => setTimeout(r, 400));
    const duplicate = await postCharge(provider.url, slow, { "idempotency-key": key });
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");

    const viaClient = await client
      .createCharge({ amount: 1999, currency: "usd", paymentMethod: "pm_card_slow" }, key)
      .catch((e: unknown) => e);
    expect(viaClient).toMatchObject({ kind: "conflict", retryable: true, status: 409, retryAfterMs: 1000 });

    expect((await first).status).toBe(201);
    const after = await postCharge(provider.url, slow, { "idempotency-key": key });
    expect(after.status).toBe(200);
    expect(after.body.id).toBe((await first).body.id);
    expect(await db.countCharges(key)).toBe(1);
  }, 10_000);
});

describe("payment methods", () => {
  it("pm_card_declined → a declined charge (HTTP 402), replayed on the same key", async () => {
    const key = uniqueKey("declined");
    const body = { ...visa, payment_method: "pm_card_declined" };
    const first = await postCharge(provider.url, body, { "idempotency-key": key });
    expect(first.status).toBe(402);
    expect(first.body).toMatchObject({
      error: { type: "card_error", code: "card_declined", message: "Your card was declined." },
      charge: {
        status: "declined",
        failure_code: "card_declined",
        failure_message: "Your card was declined.",
      },
    });

    const replay = await postCharge(provider.url, body, { "idempotency-key": key });
    expect(replay.status).toBe(402);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);

    // The client returns a decline as an outcome, not an exception.
    const charge = await client.createCharge(
      { amount: 1999, currency: "usd", paymentMethod: "pm_card_declined" },
      key,
    );
    expect(charge).toMatchObject({
      id: (first.body.charge as { id: string }).id,
      status: "declined",
      failureCode: "card_declined",
      failureMessage: "Your card was declined.",
    });
    expect(await db.countCharges(key)).toBe(1);
  });

  it("pm_card_slow takes at least 1.5 s and succeeds", async () => {
    const started = performance.now();
    const charge = await client.createCharge(
      { amount: 500, currency: "eur", paymentMethod: "pm_card_slow" },
      uniqueKey("slow"),
    );
    const elapsed = performance.now() - started;
    expect(charge.status).toBe("succeeded");
    expect(elapsed).toBeGreaterThanOrEqual(1500);
    console.info(`[slow] pm_card_slow took ${Math.round(elapsed)} ms`);
  }, 10_000);

  it("unknown payment method → 400, nothing stored", async () => {
    const key = uniqueKey("unknown-pm");
    const answer = await postCharge(
      provider.url,
      { ...visa, payment_method: "pm_card_amex" },
      { "idempotency-key": key },
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code: "payment_method_unknown" } });
    expect(await db.countCharges(key)).toBe(0);
  });
});

describe("validation", () => {
  it("requires the Idempotency-Key header", async () => {
    const answer = await postCharge(provider.url, visa);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code: "idempotency_key_required" } });
  });

  it.each([
    ["negative amount", { ...visa, amount: -5 }, "amount"],
    ["fractional amount", { ...visa, amount: 10.5 }, "amount"],
    ["bad currency", { ...visa, currency: "dollars" }, "currency"],
    ["missing payment_method", { amount: 100, currency: "usd" }, "payment_method"],
    ["non-string metadata", { ...visa, metadata: { n: 1 } }, "metadata.n"],
    ["unknown field", { ...visa, customer: "cus_1" }, "customer"],
  ])("rejects %s with 400 naming the field", async (_label, body, field) => {
    const key = uniqueKey("invalid");
    const answer = await postCharge(provider.url, body, { "idempotency-key": key });
    expect(answer.status).toBe(400);
    expect((answer.body.error as { message: string }).message).toContain(field);
    expect(await db.countCharges(key)).toBe(0);
  });

  it("rejects a body that is not JSON", async () => {
    const res = await fetch(`${provider.url}/v1/charges`, {
      method: "POST",
      headers: { ...TEST_AUTH, "idempotency-key": uniqueKey("not-json") },
      body: "amount=1",
    });
    expect(res.status).toBe(400);
  });
});

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
