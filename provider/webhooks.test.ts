import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderProcess, startProvider } from "../scripts/lib/provider-process";
import { databaseUrl, failureOf, raw, sdk, TEST_AUTH, visa } from "./test-support";
import { parseWebhookFaults } from "./webhooks";

const SECRET = "whsec_test_simulator_endpoint";

interface Delivery {
  at: number;
  body: string;
  signature: string;
  event: Stripe.Event;
}

/** A webhook endpoint that records what it gets; objects tagged with a `failing` tag are answered 500. */
async function endpoint() {
  const got: Delivery[] = [];
  const failing = new Set<string>();
  const verifier = new Stripe("sk_test_verifier");
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const signature = String(req.headers["stripe-signature"]);
      // Verified exactly as a receiver does, by the official SDK.
      const event = verifier.webhooks.constructEvent(body, signature, SECRET);
      const tag = (event.data.object as { metadata?: { tag?: string } }).metadata?.tag;
      if (tag !== undefined && failing.has(tag)) {
        res.writeHead(500).end();
        return;
      }
      got.push({ at: Date.now(), body, signature, event });
      res.writeHead(200, { "content-type": "application/json" }).end('{"received":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    failing,
    /** The deliveries of events about `objectId`, in the order they arrived. */
    about: (objectId: string) =>
      got.filter((d) => {
        const o = d.event.data.object as { id: string; payment_intent?: string };
        return o.id === objectId || o.payment_intent === objectId;
      }),
    close: () => new Promise((r) => server.close(r)),
  };
}

let hook: Awaited<ReturnType<typeof endpoint>>;
let provider: ProviderProcess;
let stripe: Stripe;

beforeAll(async () => {
  hook = await endpoint();
  provider = await startProvider({
    databaseUrl: databaseUrl(),
    env: {
      PROVIDER_WEBHOOK_URL: hook.url,
      PROVIDER_WEBHOOK_SECRET: SECRET,
      PROVIDER_WEBHOOK_RETRY_MS: "100",
    },
  });
  stripe = sdk(provider.url);
}, 20_000);

afterAll(async () => {
  await provider?.stop();
  await hook?.close();
});

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("not delivered in time");
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe("webhook delivery", () => {
  it("every event of a change, signed as stripe.webhooks.constructEvent verifies, then marked delivered", async () => {
    const pi = await stripe.paymentIntents.create(visa);
    await until(() => hook.about(pi.id).length === 3);
    const got = hook.about(pi.id);
    expect(got.map((d) => d.event.type)).toEqual([
      "payment_intent.created",
      "charge.succeeded",
      "payment_intent.succeeded",
    ]);
    for (const d of got) {
      expect(d.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(() =>
        new Stripe("sk_test_x").webhooks.constructEvent(d.body, d.signature, "whsec_another"),
      ).toThrow();
      expect((await stripe.events.retrieve(d.event.id)).pending_webhooks).toBe(0);
    }
    const tampered = got[0] as Delivery;
    expect(() =>
      new Stripe("sk_test_x").webhooks.constructEvent(
        tampered.body.replace("1999", "2999"),
        tampered.signature,
        SECRET,
      ),
    ).toThrow();
  });

  it("at least once: an endpoint that fails is retried until it answers 2xx; meanwhile delivery_success=false lists it", async () => {
    const pi = await stripe.paymentIntents.create({ amount: 100, currency: "usd" });
    const tag = `failing-${Date.now()}`;
    hook.failing.add(tag);
    const bare = await stripe.paymentIntents.create({ amount: 100, currency: "usd", metadata: { tag } });
    await stripe.paymentIntents.cancel(bare.id);
    await new Promise((r) => setTimeout(r, 400));
    expect(hook.about(bare.id)).toEqual([]);
    const pending = await stripe.events.list({ delivery_success: false, limit: 100 });
    const mine = pending.data.filter((e) => (e.data.object as { id: string }).id === bare.id);
    expect(mine.map((e) => e.type).sort()).toEqual(["payment_intent.canceled", "payment_intent.created"]);
    hook.failing.delete(tag);
    await until(() => hook.about(bare.id).length === 2);
    const after = await stripe.events.list({ delivery_success: false, limit: 100 });
    expect(after.data.some((e) => (e.data.object as { id: string }).id === bare.id)).toBe(false);
    await until(() => hook.about(pi.id).length === 1);
  });

  it("on demand: X-Provider-Webhook-Fault duplicate, delay and reorder", async () => {
    const twice = await stripe.paymentIntents.create(visa, {
      headers: { "X-Provider-Webhook-Fault": "duplicate" },
    });
    await until(() => hook.about(twice.id).length === 6);
    const ids = hook.about(twice.id).map((d) => d.event.id);
    expect(new Set(ids).size).toBe(3);

    const started = Date.now();
    const late = await stripe.paymentIntents.create(
      { amount: 100, currency: "usd" },
      { headers: { "X-Provider-Webhook-Fault": "delay=600" } },
    );
    await until(() => hook.about(late.id).length === 1);
    expect((hook.about(late.id)[0] as Delivery).at - started).toBeGreaterThanOrEqual(550);

    const reordered = await stripe.paymentIntents.create(visa, {
      headers: { "X-Provider-Webhook-Fault": "reorder" },
    });
    await until(() => hook.about(reordered.id).length === 3);
    // Each claimed batch is sent newest first; the sender may claim the three in one batch or two,
    // so only this holds every time: the oldest (created) is not sent first.
    const sent = hook.about(reordered.id).map((d) => d.event.type);
    expect([...sent].sort()).toEqual([
      "charge.succeeded",
      "payment_intent.created",
      "payment_intent.succeeded",
    ]);
    expect(sent[0]).not.toBe("payment_intent.created");

    const dropped = await stripe.paymentIntents.create(
      { amount: 100, currency: "usd" },
      { headers: { "X-Provider-Webhook-Fault": "drop" } },
    );
    const control = await stripe.paymentIntents.create({ amount: 100, currency: "usd" });
    await until(() => hook.about(control.id).length === 1);
    await new Promise((r) => setTimeout(r, 600));
    expect(hook.about(dropped.id)).toEqual([]);
    // Never sent, and listed as undelivered: the receiver's catch-up is what finds it.
    const undelivered = await stripe.events.list({ delivery_success: false, limit: 100 });
    expect(undelivered.data.some((e) => (e.data.object as { id: string }).id === dropped.id)).toBe(true);

    const bad = await raw(provider.url, "/v1/payment_intents", {
      body: "amount=100&currency=usd",
      headers: { ...TEST_AUTH, "x-provider-webhook-fault": "explode" },
    });
    expect(bad.status).toBe(400);
  });

  it("a simulator without an endpoint records no pending webhooks", async () => {
    const plain = await startProvider({ databaseUrl: databaseUrl() });
    try {
      const pi = await sdk(plain.url).paymentIntents.create(visa);
      const events = await sdk(plain.url).events.list({ limit: 10 });
      const mine = events.data.filter((e) => (e.data.object as { id: string }).id === pi.id);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.every((e) => e.pending_webhooks === 0)).toBe(true);
    } finally {
      await plain.stop();
    }
  });

  it("refuses to start with an endpoint but no whsec_ secret", async () => {
    const err = await failureOf(
      startProvider({ databaseUrl: databaseUrl(), env: { PROVIDER_WEBHOOK_URL: "http://127.0.0.1:9/x" } }),
    );
    expect(String((err as unknown as Error).message)).toMatch(/PROVIDER_WEBHOOK_SECRET/);
  });
});

describe("webhook fault syntax", () => {
  it("reads the header's and the env's forms", () => {
    expect(parseWebhookFaults("duplicate,delay=200,reorder", "h")).toEqual({
      duplicate: 1,
      delay: { minMs: 200, maxMs: 200 },
      reorder: 1,
      drop: 0,
    });
    expect(parseWebhookFaults("duplicate:0.2,delay:0-500,reorder:0.5,drop:0.1", "e")).toEqual({
      duplicate: 0.2,
      delay: { minMs: 0, maxMs: 500 },
      reorder: 0.5,
      drop: 0.1,
    });
    expect(parseWebhookFaults("drop", "h").drop).toBe(1);
    expect(() => parseWebhookFaults("lose", "h")).toThrow();
    expect(() => parseWebhookFaults("duplicate:2", "h")).toThrow();
  });
});
