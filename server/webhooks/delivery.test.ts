import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { db } from "../db";
import type { TEnvelope } from "../outbox";
import { createTestAccount } from "../test/fixtures";
import { waitFor } from "../test/messaging/queue";
import type { AddressPolicy } from "./address-guard";
import { type DeliveryOptions, deliverDueMessages } from "./deliver";
import { registerEndpoint, rotateSecret } from "./endpoints";
import { fanOutEvents } from "./fan-out";
import { replayFailedMessages, replayMessage, sendTestEvent } from "./replay";
import { endpointBacklogs } from "./stats";
import { type Answer, type ReceivedWebhook, startReceiver } from "./testing/receiver";

const LOOPBACK: AddressPolicy = { requireHttps: false, allowLoopback: true };
const receivers: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
});

async function setUp(answer?: (n: number, req: ReceivedWebhook) => Answer, events = ["payment.succeeded"]) {
  const account = await createTestAccount("webhooks");
  const receiver = await startReceiver(answer);
  receivers.push(receiver);
  const endpoint = await registerEndpoint(db(), account.id, { url: receiver.url, events }, LOOPBACK);
  return { account, receiver, endpoint };
}

function paymentSucceeded(accountId: string): TEnvelope {
  const paymentId = randomUUID();
  const occurredAt = new Date().toISOString();
  return {
    messageId: `${paymentId}:payment.succeeded`,
    topic: "payment.succeeded",
    createdAt: occurredAt,
    payload: {
      paymentId,
      orderId: randomUUID(),
      accountId,
      amount: 4200,
      currency: "EUR",
      occurredAt,
      providerChargeId: "ch_test",
      lines: [{ sku: "TEE", name: "Tee", unitPrice: 4200, quantity: 1, lineTotal: 4200 }],
    },
  };
}

/** Delivery passes for these endpoints until `done` holds. */
async function deliverUntil(
  endpointIds: string[],
  done: () => boolean | Promise<boolean>,
  overrides: Partial<DeliveryOptions> = {},
  timeoutMs = 15_000,
) {
  await waitFor(
    "the deliveries",
    async () => {
      await deliverDueMessages(db(), { policy: LOOPBACK, endpointIds, timeoutMs: 2_000, ...overrides });
      return done();
    },
    timeoutMs,
  );
}

const verify = (secret: string, r: ReceivedWebhook) =>
  new Webhook(secret).verify(r.body, {
    "webhook-id": r.headers["webhook-id"] ?? "",
    "webhook-timestamp": r.headers["webhook-timestamp"] ?? "",
    "webhook-signature": r.headers["webhook-signature"] ?? "",
  });

describe("delivering an outbox event to a merchant's endpoint", () => {
  it("signs to Standard Webhooks: Webhook.verify with the endpoint's secret accepts it", async () => {
    const { account, receiver, endpoint } = await setUp();
    const event = paymentSucceeded(account.id);
    expect(await fanOutEvents(db(), [event])).toBe(1);
    // The queue delivering the event again makes no second message.
    expect(await fanOutEvents(db(), [event])).toBe(0);
    await deliverUntil([endpoint.id], () => receiver.received.length === 1);

    const got = receiver.received[0] as ReceivedWebhook;
    expect(got.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    const body = verify(endpoint.secret, got) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    const facts = event.payload as { paymentId: string; orderId: string; occurredAt: string };
    expect(body).toEqual({
      type: "payment.succeeded",
      timestamp: facts.occurredAt,
      data: {
        object: "payment",
        id: facts.paymentId,
        orderId: facts.orderId,
        amount: 4200,
        currency: "EUR",
        status: "succeeded",
        providerChargeId: "ch_test",
        updatedAt: facts.occurredAt,
      },
    });
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(got.body, got.headers),
    ).toThrow();
    const message = await db().webhookMessage.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect([message.status, message.attempts]).toEqual(["succeeded", 1]);
  });

  it("an event type the endpoint did not subscribe to, or of another account, makes no message", async () => {
    const { account, endpoint } = await setUp(undefined, ["refund.succeeded"]);
    const other = await createTestAccount("webhooks_other");
    expect(await fanOutEvents(db(), [paymentSucceeded(account.id), paymentSucceeded(other.id)])).toBe(0);
    expect(await db().webhookMessage.count({ where: { endpointId: endpoint.id } })).toBe(0);
  });

  it("retries on the schedule until a 2xx, with the same webhook-id and body each time", async () => {
    const { account, receiver, endpoint } = await setUp((n) => ({ status: n < 3 ? 500 : 204 }));
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil([endpoint.id], () => receiver.received.length === 3, { scheduleSeconds: [0.5, 1, 5] });
    const [a, b, c] = receiver.received as [ReceivedWebhook, ReceivedWebhook, ReceivedWebhook];
    // 0.5 s and 1 s, each with ±10 % jitter.
    expect(b.at - a.at).toBeGreaterThanOrEqual(440);
    expect(c.at - b.at).toBeGreaterThanOrEqual(890);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    const attempts = await db().webhookAttempt.findMany({
      where: { endpointId: endpoint.id },
      orderBy: { attemptNumber: "asc" },
    });
    expect(attempts.map((t) => [t.attemptNumber, t.outcome, t.httpStatus])).toEqual([
      [1, "failed", 500],
      [2, "failed", 500],
      [3, "succeeded", 204],
    ]);
    const message = await db().webhookMessage.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect(message.status).toBe("succeeded");
  });

  it("gives up after the last delay of the schedule: the message fails, visibly", async () => {
    const { account, receiver, endpoint } = await setUp(() => ({ status: 500, body: "boom" }));
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil(
      [endpoint.id],
      async () => {
        const m = await db().webhookMessage.findFirst({ where: { endpointId: endpoint.id } });
        return m?.status === "failed";
      },
      { scheduleSeconds: [0.1, 0.1] },
    );
    expect(receiver.received).toHaveLength(3);
    const last = await db().webhookAttempt.findFirstOrThrow({
      where: { endpointId: endpoint.id },
      orderBy: { attemptNumber: "desc" },
    });
    expect([last.attemptNumber, last.responseExcerpt]).toEqual([3, "boom"]);
  });

  it("honours Retry-After over the scheduled delay", async () => {
    const { account, receiver, endpoint } = await setUp((n) =>
      n === 1 ? { status: 503, headers: { "retry-after": "2" } } : { status: 200 },
    );
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil([endpoint.id], () => receiver.received.length === 2, { scheduleSeconds: [0.1] });
    const [a, b] = receiver.received as [ReceivedWebhook, ReceivedWebhook];
    expect(b.at - a.at).toBeGreaterThanOrEqual(1_900);
  });

  it("a 410 disables the endpoint: nothing more is sent to it", async () => {
    const { account, receiver, endpoint } = await setUp(() => ({ status: 410 }));
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil([endpoint.id], () => receiver.received.length === 1, { scheduleSeconds: [0.1] });
    const row = await db().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.disabledReason).toBe("gone");
    expect(row.disabledAt).not.toBeNull();
    // A later event makes no message; a pending one is not claimed.
    expect(await fanOutEvents(db(), [paymentSucceeded(account.id)])).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    await deliverDueMessages(db(), { policy: LOOPBACK, endpointIds: [endpoint.id] });
    expect(receiver.received).toHaveLength(1);
    // The admin sees it among the disabled, with its failed message.
    expect(await endpointBacklogs(db())).toContainEqual(
      expect.objectContaining({ endpointId: endpoint.id, disabledReason: "gone", failed: 1, pending: 0 }),
    );
  });

  it("failing for longer than the disable window disables the endpoint with reason failing", async () => {
    const { account, endpoint } = await setUp(() => ({ status: 500 }));
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil(
      [endpoint.id],
      async () =>
        (await db().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).disabledReason ===
        "failing",
      { scheduleSeconds: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2], disableAfterSeconds: 0.5 },
    );
  });

  it("a timeout is a failed attempt, and a redirect is not followed", async () => {
    const target = await startReceiver();
    receivers.push(target);
    const { account, receiver, endpoint } = await setUp((n) =>
      n === 1 ? "hang" : { status: 302, headers: { location: target.url } },
    );
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil([endpoint.id], () => receiver.received.length === 2, {
      scheduleSeconds: [0.1, 60],
      timeoutMs: 300,
    });
    await waitFor(
      "both attempts",
      async () => (await db().webhookAttempt.count({ where: { endpointId: endpoint.id } })) === 2,
    );
    const attempts = await db().webhookAttempt.findMany({
      where: { endpointId: endpoint.id },
      orderBy: { attemptNumber: "asc" },
    });
    expect(attempts[0]?.responseExcerpt).toBe("timed out after 300 ms");
    expect([attempts[1]?.outcome, attempts[1]?.httpStatus]).toEqual(["failed", 302]);
    expect(attempts[1]?.responseExcerpt).toMatch(/^redirect not followed/);
    expect(target.received).toHaveLength(0);
  });
});

describe("several workers at once", () => {
  it("never send one message twice: each claim skips the rows another holds", async () => {
    const { account, receiver, endpoint } = await setUp();
    await fanOutEvents(
      db(),
      Array.from({ length: 30 }, () => paymentSucceeded(account.id)),
    );
    const workers = Array.from({ length: 4 }, () =>
      deliverDueMessages(db(), { policy: LOOPBACK, endpointIds: [endpoint.id], batchSize: 10 }),
    );
    const passes = await Promise.all(workers);
    await deliverUntil([endpoint.id], () => receiver.received.length >= 30);
    expect(passes.reduce((n, p) => n + p.claimed, 0)).toBeLessThanOrEqual(30);
    const ids = receiver.received.map((r) => r.headers["webhook-id"]);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });
});

describe("rotation, replay and test events", () => {
  it("during the overlap both secrets sign; after it only the new one", async () => {
    const { account, receiver, endpoint } = await setUp();
    const rotated = await rotateSecret(db(), account.id, endpoint.id, 1);
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil([endpoint.id], () => receiver.received.length === 1);
    const during = receiver.received[0] as ReceivedWebhook;
    expect(during.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verify(endpoint.secret, during)).toBeTruthy();
    expect(verify(rotated.secret, during)).toBeTruthy();

    await new Promise((r) => setTimeout(r, 1_100));
    await fanOutEvents(db(), [paymentSucceeded(account.id)]);
    await deliverUntil([endpoint.id], () => receiver.received.length === 2);
    const after = receiver.received[1] as ReceivedWebhook;
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verify(rotated.secret, after)).toBeTruthy();
    expect(() => verify(endpoint.secret, after)).toThrow();
  });

  it("replays one message with its webhook-id, and the failed ones of a time range", async () => {
    let failing = true;
    const { account, receiver, endpoint } = await setUp(() => ({ status: failing ? 500 : 200 }));
    const before = new Date(Date.now() - 1000);
    await fanOutEvents(db(), [paymentSucceeded(account.id), paymentSucceeded(account.id)]);
    await deliverUntil(
      [endpoint.id],
      async () => {
        const failed = await db().webhookMessage.count({
          where: { endpointId: endpoint.id, status: "failed" },
        });
        return failed === 2;
      },
      { scheduleSeconds: [] as number[] },
    );
    expect(receiver.received).toHaveLength(2);

    failing = false;
    expect(
      await replayFailedMessages(db(), account.id, endpoint.id, { since: before, until: new Date() }),
    ).toBe(2);
    await deliverUntil([endpoint.id], () => receiver.received.length === 4);
    const ids = receiver.received.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids.slice(2))).toEqual(new Set(ids.slice(0, 2)));

    const one = ids[0] as string;
    await replayMessage(db(), account.id, one);
    await deliverUntil([endpoint.id], () => receiver.received.length === 5);
    expect(receiver.received[4]?.headers["webhook-id"]).toBe(one);
    const other = await createTestAccount("webhooks_other");
    await expect(replayMessage(db(), other.id, one)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("sends a test event to one endpoint, signed like any other", async () => {
    const { account, receiver, endpoint } = await setUp();
    await sendTestEvent(db(), account.id, endpoint.id);
    await deliverUntil([endpoint.id], () => receiver.received.length === 1);
    expect(verify(endpoint.secret, receiver.received[0] as ReceivedWebhook)).toMatchObject({
      type: "webhook.test",
    });
  });
});
