import { setTimeout as sleep } from "node:timers/promises";
import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, raw, sdk, TEST_AUTH, uniqueKey, visa } from "./test-support";

let provider: ProviderProcess;
let stripe: Stripe;

beforeAll(async () => {
  provider = await startProvider({ databaseUrl: databaseUrl() });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
});

/** `n` payments tagged with a fresh tag, oldest first. */
async function tagged(n: number, tag = uniqueKey("tag")) {
  const made: Stripe.PaymentIntent[] = [];
  for (let i = 0; i < n; i++)
    made.push(await stripe.paymentIntents.create({ ...visa, metadata: { tag, i: String(i) } }));
  return { tag, made };
}

describe("GET /v1/payment_intents", () => {
  it("newest first; starting_after walks older pages, ending_before newer ones, without gaps or repeats", async () => {
    const since = Math.floor(Date.now() / 1000);
    const { made } = await tagged(7);
    const ids = made.map((p) => p.id).reverse();
    const first = await stripe.paymentIntents.list({ limit: 3, created: { gte: since } });
    expect(first).toMatchObject({ object: "list", has_more: true, url: "/v1/payment_intents" });
    // Other tests' payments may interleave (the schema is shared): look at ours only.
    const walked: string[] = [];
    for await (const pi of stripe.paymentIntents.list({ limit: 2, created: { gte: since } }))
      walked.push(pi.id);
    expect(walked.filter((id) => ids.includes(id))).toEqual(ids);
    expect(new Set(walked).size).toBe(walked.length);

    const older = await stripe.paymentIntents.list({ limit: 2, starting_after: ids[2] as string });
    expect(older.data.map((p) => p.id)).toEqual([ids[3], ids[4]]);
    const newer = await stripe.paymentIntents.list({ limit: 2, ending_before: ids[4] as string });
    expect(newer.data.map((p) => p.id)).toEqual([ids[2], ids[3]]);
  });

  it("created filters in whole seconds: gt, gte, lt, lte", async () => {
    const pi = await stripe.paymentIntents.create(visa);
    const at = pi.created;
    const ids = async (created: Stripe.RangeQueryParam | number) =>
      (await stripe.paymentIntents.list({ created, limit: 100 })).data.map((p) => p.id);
    expect(await ids({ gte: at })).toContain(pi.id);
    expect(await ids(at)).toContain(pi.id);
    expect(await ids({ lte: at, gt: at - 1 })).toContain(pi.id);
    expect(await ids({ gt: at })).not.toContain(pi.id);
    expect(await ids({ lt: at })).not.toContain(pi.id);
  });

  it("an unknown cursor is 404 resource_missing; an unknown filter 400 parameter_unknown; limit 1-100", async () => {
    const cursor = await failureOf(
      stripe.paymentIntents.list({ starting_after: "pi_000000000000000000000000" }),
    );
    expect(cursor).toMatchObject({ statusCode: 404, code: "resource_missing", param: "starting_after" });
    const filter = await raw(provider.url, "/v1/payment_intents?colour=red", { headers: TEST_AUTH });
    expect(filter.body).toMatchObject({ error: { code: "parameter_unknown", param: "colour" } });
    const limit = await failureOf(stripe.paymentIntents.list({ limit: 101 }));
    expect(limit).toMatchObject({ statusCode: 400, param: "limit" });
  });
});

describe("GET /v1/payment_intents/search", () => {
  it("by metadata, newest first, paged with next_page", async () => {
    const { tag, made } = await tagged(5);
    const first = await stripe.paymentIntents.search({ query: `metadata['tag']:'${tag}'`, limit: 2 });
    expect(first).toMatchObject({
      object: "search_result",
      has_more: true,
      url: "/v1/payment_intents/search",
    });
    expect(first.next_page).toEqual(expect.any(String));
    const all: string[] = [];
    for await (const pi of stripe.paymentIntents.search({ query: `metadata["tag"]:"${tag}"`, limit: 2 }))
      all.push(pi.id);
    expect(all).toEqual(made.map((p) => p.id).reverse());
  });

  it("AND, OR, negation, status, currency, amount and created", async () => {
    const tag = uniqueKey("tag");
    const a = await stripe.paymentIntents.create({ ...visa, amount: 100, metadata: { tag } });
    const b = await stripe.paymentIntents.create({ amount: 200, currency: "eur", metadata: { tag } });
    const ids = async (query: string) =>
      (await stripe.paymentIntents.search({ query })).data.map((p) => p.id).sort();
    const t = `metadata['tag']:'${tag}'`;
    expect(await ids(`${t} AND status:'succeeded'`)).toEqual([a.id]);
    expect(await ids(`${t} AND -status:'succeeded'`)).toEqual([b.id]);
    expect(await ids(`${t} AND currency:'eur'`)).toEqual([b.id]);
    expect(await ids(`${t} AND amount>150`)).toEqual([b.id]);
    expect(await ids(`${t} AND amount<=100 AND created>=${a.created}`)).toEqual([a.id]);
    expect(await ids(`metadata['tag']:'${tag}' OR metadata['tag']:'${uniqueKey("none")}'`)).toEqual(
      [a.id, b.id].sort(),
    );
  });

  it("a query it cannot read is 400 on `query`", async () => {
    for (const query of [
      "",
      "colour:'red'",
      "status:'a' AND status:'b' OR status:'c'",
      "metadata['k']>1",
      "status:",
    ]) {
      const err = await failureOf(stripe.paymentIntents.search({ query }));
      expect(err, query).toMatchObject({ statusCode: 400, param: "query" });
    }
  });
});

describe("GET /v1/events", () => {
  it("every change recorded: the list filters by type (with *), types[], created; newest first", async () => {
    const since = Math.floor(Date.now() / 1000);
    const pi = await stripe.paymentIntents.create(visa);
    await stripe.refunds.create({ payment_intent: pi.id, amount: 100 });
    const mine = (events: Stripe.Event[]) =>
      events.filter((e) => {
        const o = e.data.object as { id: string; payment_intent?: string };
        return o.id === pi.id || o.payment_intent === pi.id;
      });
    const all: Stripe.Event[] = [];
    for await (const e of stripe.events.list({ created: { gte: since }, limit: 100 })) all.push(e);
    expect(mine(all).map((e) => e.type)).toEqual([
      "charge.refunded",
      "refund.created",
      "payment_intent.succeeded",
      "charge.succeeded",
      "payment_intent.created",
    ]);
    const succeeded = mine(all).find((e) => e.type === "payment_intent.succeeded") as Stripe.Event;
    expect(succeeded).toMatchObject({
      object: "event",
      livemode: false,
      pending_webhooks: 0,
      data: {
        object: { id: pi.id, status: "succeeded" },
        previous_attributes: { status: "requires_confirmation" },
      },
    });
    expect(succeeded.id).toMatch(/^evt_/);
    expect(await stripe.events.retrieve(succeeded.id)).toEqual(succeeded);

    const piEvents = await stripe.events.list({
      type: "payment_intent.*",
      created: { gte: since },
      limit: 100,
    });
    expect(piEvents.data.every((e) => e.type.startsWith("payment_intent."))).toBe(true);
    expect(mine(piEvents.data)).toHaveLength(2);
    const two = await stripe.events.list({
      types: ["refund.created", "charge.refunded"],
      created: { gte: since },
      limit: 100,
    });
    expect(mine(two.data).map((e) => e.type)).toEqual(["charge.refunded", "refund.created"]);
  });

  it("starting_after and ending_before page through events; delivery_success=false lists only undelivered ones", async () => {
    const mine = await stripe.paymentIntents.create(visa);
    const page = await stripe.events.list({ limit: 3 });
    const [newest, middle, oldest] = page.data.map((e) => e.id);
    expect((await stripe.events.list({ limit: 1, starting_after: middle as string })).data[0]?.id).toBe(
      oldest,
    );
    expect((await stripe.events.list({ limit: 1, ending_before: middle as string })).data[0]?.id).toBe(
      newest,
    );
    // No webhook endpoint here: nothing of this test's is waiting for delivery (other files' tests
    // share the provider's store, and a dropped delivery stays undelivered).
    await sleep(10);
    const undelivered = await stripe.events.list({ delivery_success: false, limit: 100 });
    expect(undelivered.data.filter((e) => (e.data.object as { id: string }).id === mine.id)).toEqual([]);
    const both = await failureOf(stripe.events.list({ type: "a", types: ["b"] }));
    expect(both).toMatchObject({ statusCode: 400, code: "parameters_exclusive" });
  });
});
