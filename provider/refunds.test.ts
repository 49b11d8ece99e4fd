import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { httpProvider, isProviderError, type PaymentProvider } from "./client";
import { databaseUrl, openDb, postRefund, TEST_AUTH, uniqueKey } from "./test-support";

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

async function charge(amount: number, paymentMethod = "pm_card_visa") {
  return client.createCharge({ amount, currency: "eur", paymentMethod }, uniqueKey("charge"));
}

function key(label: string) {
  return { "idempotency-key": uniqueKey(label) };
}

describe("POST /v1/refunds", () => {
  it("refunds part of a charge; the same key again replays it; other parameters on the key → 422", async () => {
    const ch = await charge(1000);
    const headers = key("refund");
    const body = { charge: ch.id, amount: 400, metadata: { refund_id: "r-1", payment_id: "p-1" } };
    const first = await postRefund(provider.url, body, headers);
    const again = await postRefund(
      provider.url,
      { ...body, metadata: { payment_id: "p-1", refund_id: "r-1" } },
      headers,
    );

    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.body).toMatchObject({
      object: "refund",
      charge: ch.id,
      amount: 400,
      currency: "eur",
      status: "succeeded",
      metadata: { refund_id: "r-1", payment_id: "p-1" },
      idempotency_key: headers["idempotency-key"],
    });
    expect(first.body.id).toMatch(/^re_[0-9a-f]{24}$/);
    expect(new Date(String(first.body.created_at)).toISOString()).toBe(first.body.created_at);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);

    const other = await postRefund(provider.url, { ...body, amount: 401 }, headers);
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({
      error: { type: "idempotency_error", code: "idempotency_key_in_use" },
    });
    expect(await db.refundsOf(ch.id)).toEqual({ count: 1, sum: 400, amountRefunded: 400 });
  });

  it("20 concurrent refunds with different keys never exceed the charge: exactly what fits is refunded", async () => {
    const ch = await charge(1000);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        postRefund(provider.url, { charge: ch.id, amount: 150 }, key(`race-${i}`)),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    // 6 × 150 = 900 fit in 1000; the 7th would make 1050.
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(statuses.filter((s) => s === 400)).toHaveLength(14);
    for (const refused of answers.filter((a) => a.status === 400)) {
      expect(refused.body).toMatchObject({
        error: { type: "invalid_request_error", code: "amount_too_large", param: "amount" },
      });
      expect((refused.body.error as { message: string }).message).toContain("(100)");
    }
    expect(await db.refundsOf(ch.id)).toEqual({ count: 6, sum: 900, amountRefunded: 900 });

    // The rest, exactly, still fits; then nothing does.
    expect((await postRefund(provider.url, { charge: ch.id, amount: 100 }, key("rest"))).status).toBe(200);
    const none = await postRefund(provider.url, { charge: ch.id, amount: 1 }, key("none"));
    expect(none.status).toBe(400);
    expect((none.body.error as { message: string }).message).toContain("(0)");
    expect(await db.refundsOf(ch.id)).toEqual({ count: 7, sum: 1000, amountRefunded: 1000 });
  });

  it("20 concurrent requests with one key → one refund; the others replay it or are told 409", async () => {
    const ch = await charge(1000);
    const headers = key("same");
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => postRefund(provider.url, { charge: ch.id, amount: 300 }, headers)),
    );
    const ids = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.id));
    expect(ids.size).toBe(1);
    for (const a of answers) {
      if (a.status === 409) expect(a.headers.get("retry-after")).toBe("1");
      else expect(a.status).toBe(200);
    }
    expect(answers.filter((a) => a.status === 200 && !a.headers.get("idempotent-replayed"))).toHaveLength(1);
    expect(await db.refundsOf(ch.id)).toEqual({ count: 1, sum: 300, amountRefunded: 300 });
  });

  it("a declined charge is not refundable (400 charge_not_refundable), nothing stored", async () => {
    const declined = await charge(1000, "pm_card_declined");
    expect(declined.status).toBe("declined");
    const answer = await postRefund(provider.url, { charge: declined.id, amount: 100 }, key("declined"));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: { type: "invalid_request_error", code: "charge_not_refundable", param: "charge" },
    });
    expect(await db.refundsOf(declined.id)).toEqual({ count: 0, sum: 0, amountRefunded: 0 });
  });

  it("an unknown charge → 404 resource_missing; the key stays unused", async () => {
    const headers = key("unknown");
    const answer = await postRefund(
      provider.url,
      { charge: "ch_000000000000000000000000", amount: 100 },
      headers,
    );
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ error: { code: "resource_missing", param: "charge" } });
    // The same key may then be used for a refund that can be made.
    const ch = await charge(500);
    expect((await postRefund(provider.url, { charge: ch.id, amount: 100 }, headers)).status).toBe(200);
  });

  it.each([
    ["no Idempotency-Key", { charge: "ch_1", amount: 1 }, {}, "idempotency_key_required"],
    ["a zero amount", { charge: "ch_1", amount: 0 }, key("zero"), "parameter_invalid"],
    ["a fractional amount", { charge: "ch_1", amount: 1.5 }, key("frac"), "parameter_invalid"],
    ["an unknown field", { charge: "ch_1", amount: 1, currency: "usd" }, key("field"), "parameter_invalid"],
    ["no charge", { amount: 1 }, key("nocharge"), "parameter_invalid"],
  ])("refuses %s with 400", async (_label, body, headers, code) => {
    const answer = await postRefund(provider.url, body, headers);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code } });
  });

  it("the charge's CHECK refuses an over-refund even from a statement that skips the condition", async () => {
    const ch = await charge(700);
    const pool = new pg.Pool({ connectionString: databaseUrl(), max: 1 });
    try {
      const error = await pool
        .query("UPDATE payment_provider.charges SET amount_refunded = amount + 1 WHERE id = $1", [ch.id])
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "23514", constraint: "charges_amount_refunded_check" });
    } finally {
      await pool.end();
    }
  });
});

describe("GET /v1/refunds", () => {
  it("lists oldest first, filtered by charge, key and metadata, page by page", async () => {
    const ch = await charge(1000);
    const other = await charge(1000);
    const keys = [uniqueKey("l0"), uniqueKey("l1"), uniqueKey("l2")];
    const made = [];
    for (const [i, k] of keys.entries())
      made.push(await client.createRefund({ charge: ch.id, amount: 100 + i, metadata: { n: String(i) } }, k));
    await client.createRefund({ charge: other.id, amount: 50, metadata: { n: "0" } }, uniqueKey("l-other"));

    const page = async (query: string) => {
      const res = await fetch(`${provider.url}/v1/refunds?${query}`, { headers: TEST_AUTH });
      return {
        status: res.status,
        body: (await res.json()) as { data: { id: string }[]; has_more: boolean },
      };
    };
    const first = await page(`charge=${ch.id}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((r) => r.id)).toEqual([made[0]?.id, made[1]?.id]);
    expect(first.body.has_more).toBe(true);
    const second = await page(`charge=${ch.id}&limit=2&starting_after=${made[1]?.id}`);
    expect(second.body.data.map((r) => r.id)).toEqual([made[2]?.id]);
    expect(second.body.has_more).toBe(false);

    expect((await page(`idempotency_key=${keys[1]}`)).body.data.map((r) => r.id)).toEqual([made[1]?.id]);
    expect((await page(`charge=${ch.id}&metadata[n]=2`)).body.data.map((r) => r.id)).toEqual([made[2]?.id]);
    expect((await page("starting_after=re_000000000000000000000000")).status).toBe(400);
    expect((await page("colour=red")).status).toBe(400);
    expect(
      (await fetch(`${provider.url}/v1/refunds/${made[0]?.id}`, { headers: TEST_AUTH }).then((r) =>
        r.json(),
      )) as unknown,
    ).toMatchObject({ id: made[0]?.id, amount: 100 });
    expect((await fetch(`${provider.url}/v1/refunds/re_0`, { headers: TEST_AUTH })).status).toBe(404);

    // The client walks every page (page size 1 here) with the same filters.
    const paged = httpProvider({ baseUrl: provider.url, pageSize: 1 });
    const all = [];
    for await (const r of paged.listRefunds({ charge: ch.id })) all.push(r);
    expect(all).toEqual(made);
    const byMetadata = [];
    for await (const r of paged.listRefunds({ metadata: { n: "0" }, charge: other.id }))
      byMetadata.push(r.amount);
    expect(byMetadata).toEqual([50]);
    const byKey = [];
    for await (const r of client.listRefunds({ idempotencyKey: keys[0] })) byKey.push(r.id);
    expect(byKey).toEqual([made[0]?.id]);
  });
});

describe("refund faults", () => {
  it("drop: the client sees a retryable error, the refund exists; the retry returns that same refund", async () => {
    const ch = await charge(1000);
    const k = uniqueKey("drop");
    const error = await client
      .createRefund({ charge: ch.id, amount: 250 }, k, { fault: "drop" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "unavailable", retryable: true, requestMayHaveLeft: true });
    expect(await db.refundsOf(ch.id)).toEqual({ count: 1, sum: 250, amountRefunded: 250 });
    const retried = await client.createRefund({ charge: ch.id, amount: 250 }, k);
    expect(retried).toMatchObject({ charge: ch.id, amount: 250, status: "succeeded" });
    expect(await db.refundsOf(ch.id)).toEqual({ count: 1, sum: 250, amountRefunded: 250 });
  });

  it("error=500 / 503: nothing stored; the retry refunds once", async () => {
    const ch = await charge(1000);
    const k = uniqueKey("error");
    const e500 = await client
      .createRefund({ charge: ch.id, amount: 100 }, k, { fault: "error=500" })
      .catch((e: unknown) => e);
    expect(e500).toMatchObject({ kind: "unavailable", retryable: true, status: 500 });
    const e503 = await client
      .createRefund({ charge: ch.id, amount: 100 }, k, { fault: "error=503" })
      .catch((e: unknown) => e);
    expect(e503).toMatchObject({ kind: "unavailable", status: 503, retryAfterMs: 1000 });
    expect(await db.refundsOf(ch.id)).toEqual({ count: 0, sum: 0, amountRefunded: 0 });
    await client.createRefund({ charge: ch.id, amount: 100 }, k);
    expect(await db.refundsOf(ch.id)).toEqual({ count: 1, sum: 100, amountRefunded: 100 });
  });

  it("latency beyond the client timeout: a timeout, the refund committed anyway, the retry replays it", async () => {
    const ch = await charge(1000);
    const k = uniqueKey("latency");
    const impatient = httpProvider({ baseUrl: provider.url, timeoutMs: 300 });
    const error = await impatient
      .createRefund({ charge: ch.id, amount: 100 }, k, { fault: "latency=1200" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    await new Promise((r) => setTimeout(r, 1200));
    expect(await db.refundsOf(ch.id)).toEqual({ count: 1, sum: 100, amountRefunded: 100 });
    const retried = await client.createRefund({ charge: ch.id, amount: 100 }, k);
    expect((await db.refundsOf(ch.id)).count).toBe(1);
    expect(retried.amount).toBe(100);
  }, 10_000);

  it("PROVIDER_FAULTS applies to POST /v1/refunds, never to the refund list", async () => {
    const faulty = await startProvider({ databaseUrl: databaseUrl(), env: { PROVIDER_FAULTS: "error=503" } });
    try {
      const ch = await charge(1000);
      const faultyClient = httpProvider({ baseUrl: faulty.url });
      const error = await faultyClient
        .createRefund({ charge: ch.id, amount: 100 }, uniqueKey("env"))
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: "unavailable", status: 503 });
      expect(await db.refundsOf(ch.id)).toEqual({ count: 0, sum: 0, amountRefunded: 0 });
      const listed = [];
      for await (const r of faultyClient.listRefunds({ charge: ch.id })) listed.push(r);
      expect(listed).toEqual([]);
    } finally {
      await faulty.stop();
    }
  }, 20_000);
});

describe("client refusals", () => {
  it("each refusal is a ProviderError of kind rejected with its code, never retryable", async () => {
    const ch = await charge(300);
    const declined = await charge(300, "pm_card_declined");
    const cases = [
      [{ charge: ch.id, amount: 301 }, "amount_too_large", 400],
      [{ charge: declined.id, amount: 1 }, "charge_not_refundable", 400],
      [{ charge: "ch_ffffffffffffffffffffffff", amount: 1 }, "resource_missing", 404],
    ] as const;
    for (const [input, code, status] of cases) {
      const error = await client.createRefund(input, uniqueKey(code)).catch((e: unknown) => e);
      expect(isProviderError(error)).toBe(true);
      expect(error).toMatchObject({ kind: "rejected", retryable: false, code, status });
    }
  });
});
