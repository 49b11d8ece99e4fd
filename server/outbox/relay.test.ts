import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, vi } from "vitest";
import { createPrismaClient, db } from "../db";
import { logger } from "../log";
import { startReceiptsConsumer } from "../receipts";
import { createTestAccount, type TestAccount } from "../test/fixtures";
import { startDatabaseProxy } from "../test/messaging/db-proxy";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { FAST_TRANSPORT, testDatabaseUrl } from "../test/messaging/fast";
import { settledPayment } from "../test/messaging/payments";
import { startMessagingProcess } from "../test/messaging/processes";
import { deliveriesOf, drainOutbox, startTestTransport, waitFor } from "../test/messaging/queue";
import { it, type TestProvider } from "../test/vitest";
import { paymentMessageId } from "./events";
import { relayOutboxBatch, startRelay } from "./relay";
import { type Delivery, type MessageTransport, startQueueTransport } from "./transport";

let release: () => Promise<void>;
let provider: TestProvider;
let account: TestAccount;
let transport: MessageTransport;
const planted: string[] = [];

it.beforeAll(async ({ provider: running }) => {
  release = await takeMessagingTurn();
  provider = running;
  account = await createTestAccount("relay");
  transport = await startTestTransport();
}, 180_000);
afterAll(async () => {
  await db().outboxMessage.deleteMany({ where: { id: { in: planted } } });
  await transport?.stop();
  await release?.();
});

/** Outbox rows of a topic no queue takes: publishing them has no effect beyond the relay's. */
async function plantMessages(n: number) {
  const ids = Array.from({ length: n }, () => paymentMessageId("payment.declined", randomUUID()));
  await db().outboxMessage.createMany({
    data: ids.map((id) => ({ id, topic: "payment.declined", payload: { planted: true } })),
  });
  planted.push(...ids);
  return ids;
}

const outboxRow = (id: string) => db().outboxMessage.findUniqueOrThrow({ where: { id } });

describe("the relay", () => {
  it("killed by SIGKILL after publishing and before marking sent: the message is published again, and its receipt exists once", async () => {
    await drainOutbox(transport);
    const { order, messageId } = await settledPayment(account, provider.client);
    const doomed = await startMessagingProcess(["relay"], {
      CHECKOUT_FAILPOINTS: "relay_after_publish",
      RELAY_BATCH_SIZE: "1000",
    });
    expect(await doomed.exited).toBe("SIGKILL");
    // The crash fell between the two: on the queue, still pending in the outbox.
    expect(await deliveriesOf(messageId)).toHaveLength(1);
    expect((await outboxRow(messageId)).sentAt).toBeNull();

    const survivor = await startMessagingProcess(["relay", "consumer"]);
    try {
      await waitFor("the message marked sent", async () => (await outboxRow(messageId)).sentAt);
      await waitFor("both deliveries acknowledged", async () => {
        const deliveries = await deliveriesOf(messageId);
        return deliveries.length === 2 && deliveries.every((d) => d.state === "completed");
      });
    } finally {
      await survivor.stop();
    }
    const receipts = await db().receipt.findMany({ where: { orderId: order.id } });
    expect(receipts.map((r) => r.messageId)).toEqual([messageId]);
    expect(await db().processedMessage.count({ where: { messageId } })).toBe(1);
  });

  it("run by four relays at once, publishes each message exactly once and never two at a time", async () => {
    const ids = new Set(await plantMessages(60));
    const publishes = new Map<string, number>();
    const inFlight = new Map<string, number>();
    let maxInFlightPerMessage = 0;
    let relaysPublishing = 0;
    let maxRelaysPublishing = 0;
    const relays = Array.from({ length: 4 }, () => createPrismaClient(testDatabaseUrl()));
    // The relay publishes a batch at once: every message of it counts as in flight meanwhile.
    const spy: MessageTransport = {
      ...transport,
      async publishAll(envelopes) {
        const ours = envelopes.map((e) => e.messageId).filter((id) => ids.has(id));
        for (const id of ours) {
          publishes.set(id, (publishes.get(id) ?? 0) + 1);
          inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
          maxInFlightPerMessage = Math.max(maxInFlightPerMessage, inFlight.get(id) ?? 0);
        }
        if (ours.length > 0) maxRelaysPublishing = Math.max(maxRelaysPublishing, ++relaysPublishing);
        await new Promise((r) => setTimeout(r, 5));
        if (ours.length > 0) relaysPublishing--;
        for (const id of ours) inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
        return transport.publishAll(envelopes);
      },
    };
    try {
      await Promise.all(
        relays.map(async (prisma) => {
          while ((await relayOutboxBatch({ prisma, transport: spy }, { batchSize: 5 })).more);
        }),
      );
    } finally {
      await Promise.all(relays.map((r) => r.$disconnect()));
    }
    expect(maxRelaysPublishing).toBeGreaterThan(1);
    expect(maxInFlightPerMessage).toBe(1);
    expect([...ids].filter((id) => publishes.get(id) !== 1)).toEqual([]);
    const unsent = await db().outboxMessage.count({ where: { id: { in: [...ids] }, sentAt: null } });
    expect(unsent).toBe(0);
  });

  it("backs off a message whose publish fails, without holding up the others, and sends it once it can", async () => {
    const [failing, healthy] = (await plantMessages(2)) as [string, string];
    let attempts = 0;
    // A batch holding the failing message fails as a whole; the relay then goes one by one.
    const flaky: MessageTransport = {
      ...transport,
      async publishAll(envelopes) {
        if (envelopes.some((e) => e.messageId === failing)) throw new Error("queue unavailable");
        return transport.publishAll(envelopes);
      },
      async publish(envelope) {
        if (envelope.messageId !== failing) return transport.publish(envelope);
        attempts++;
        throw new Error("queue unavailable");
      },
    };
    const pass = () => relayOutboxBatch({ prisma: db(), transport: flaky }, { batchSize: 1000 });
    await pass();
    expect((await outboxRow(healthy)).sentAt).not.toBeNull();
    const first = await outboxRow(failing);
    expect(first).toMatchObject({ sentAt: null, attempts: 1, lastError: "queue unavailable" });
    // 2 s × [0.5, 1): not due again yet, so the next pass leaves it alone.
    const firstDelay = first.nextAttemptAt.getTime() - Date.now();
    expect(firstDelay).toBeGreaterThan(500);
    await pass();
    expect(attempts).toBe(1);

    const makeDue = () =>
      db().outboxMessage.update({ where: { id: failing }, data: { nextAttemptAt: new Date() } });
    await makeDue();
    await pass();
    const second = await outboxRow(failing);
    expect(second.attempts).toBe(2);
    expect(second.nextAttemptAt.getTime() - Date.now()).toBeGreaterThan(1500);

    await makeDue();
    await relayOutboxBatch({ prisma: db(), transport }, { batchSize: 1000 });
    expect(await outboxRow(failing)).toMatchObject({
      attempts: 3,
      lastError: null,
      sentAt: expect.any(Date),
    });
  });

  it("keeps relaying, and the consumer keeps consuming, after the database restarts", async () => {
    const warn = vi.spyOn(logger, "warn").mockImplementation(() => {});
    const proxy = await startDatabaseProxy(testDatabaseUrl());
    const prisma = createPrismaClient(proxy.url);
    const ownTransport = await startQueueTransport({ connectionString: proxy.url, ...FAST_TRANSPORT });
    const deps = { prisma, transport: ownTransport };
    const pollers = [startRelay(deps, { idleMs: 50 }), startReceiptsConsumer(deps, { idleMs: 50 })];
    try {
      const [before] = (await plantMessages(1)) as [string];
      await waitFor("a message sent before the restart", async () => (await outboxRow(before)).sentAt);

      proxy.takeDown();
      const { order, messageId } = await settledPayment(account, provider.client);
      await new Promise((r) => setTimeout(r, 1000));
      expect((await outboxRow(messageId)).sentAt).toBeNull();
      expect(warn.mock.calls.some((call) => String(call[1]).startsWith("outbox relay failed"))).toBe(true);

      proxy.bringUp();
      await waitFor("the receipt, after the restart", () =>
        db().receipt.findUnique({ where: { orderId: order.id } }),
      );
      expect(await db().receipt.count({ where: { orderId: order.id } })).toBe(1);
    } finally {
      await Promise.all(pollers.map((p) => p.stop()));
      await ownTransport.stop();
      await prisma.$disconnect();
      await proxy.stop();
      warn.mockRestore();
    }
  });
});

describe("the transport's batch publish", () => {
  it("puts a relay batch on the queue as one job; a message given back from it returns alone, and the job completes", async () => {
    const schema = `pgboss_batch_${randomUUID().slice(0, 8)}`;
    const own = await startQueueTransport({
      connectionString: testDatabaseUrl(),
      schema,
      ...FAST_TRANSPORT,
      ackTimeoutSeconds: 60,
      retryDelaySeconds: 30,
    });
    const envelopes = Array.from({ length: 3 }, () => ({
      messageId: paymentMessageId("payment.succeeded", randomUUID()),
      topic: "payment.succeeded" as const,
      createdAt: new Date().toISOString(),
      payload: {},
    }));
    const jobs = () =>
      db().$queryRawUnsafe<{ id: string; state: string; message_id: string | null; due: boolean }[]>(
        `SELECT id::text, state::text, data->>'messageId' AS message_id, start_after > now() + interval '20 seconds' AS due
           FROM "${schema}".job WHERE name = 'receipts' ORDER BY created_on, id`,
      );
    try {
      await own.publishAll(envelopes);
      const [batch, ...others] = await jobs();
      expect(others).toEqual([]);
      const got = await own.receive("receipts", 10);
      expect(got.map((d) => (d.data as { messageId: string }).messageId)).toEqual(
        envelopes.map((e) => e.messageId),
      );
      expect(new Set(got.map((d) => d.jobId))).toEqual(new Set([batch?.id]));

      await own.reject(got[1] as Delivery, new Error("refused"));
      expect((await jobs()).map((j) => [j.state, j.message_id, j.due])).toEqual([
        ["active", null, false],
        ["created", envelopes[1]?.messageId, true],
      ]);
      await own.ack([got[0] as Delivery, got[2] as Delivery]);
      expect((await jobs()).map((j) => j.state)).toEqual(["completed", "created"]);
    } finally {
      await own.stop();
      await db().$executeRawUnsafe(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it("refuses a batch for a queue that does not exist, as send() does, rather than drop it", async () => {
    // A pg-boss schema of its own, so that deleting its receipts queue touches no other test.
    const schema = `pgboss_gone_${randomUUID().slice(0, 8)}`;
    const own = await startQueueTransport({ connectionString: testDatabaseUrl(), schema, ...FAST_TRANSPORT });
    const envelope = {
      messageId: paymentMessageId("payment.succeeded", randomUUID()),
      topic: "payment.succeeded" as const,
      createdAt: new Date().toISOString(),
      payload: {},
    };
    try {
      await db().$executeRawUnsafe(`SELECT "${schema}".delete_queue('receipts')`);
      await expect(own.publishAll([envelope])).rejects.toThrow("queue receipts does not exist");
      await expect(own.publish(envelope)).rejects.toThrow("queue receipts refused message");
    } finally {
      await own.stop();
      await db().$executeRawUnsafe(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});
