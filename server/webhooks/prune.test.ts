import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "../db";
import { pruneSentMessages } from "../outbox";
import { createTestAccount } from "../test/fixtures";
import { registerEndpoint } from "./endpoints";
import { newMessageId } from "./fan-out";
import { pruneWebhookMessages } from "./prune";

const DAY = 86_400;
const RETENTION = 30 * DAY;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY * 1000);
const LOOPBACK = { requireHttps: false, allowLoopback: true };

async function endpointOfNewAccount() {
  const account = await createTestAccount("webhook_prune");
  return registerEndpoint(
    db(),
    account.id,
    { url: "http://127.0.0.1:9/hooks", events: ["payment.succeeded"] },
    LOOPBACK,
  );
}

/** A message with one attempt per answer, its last activity `days` ago. */
async function message(endpointId: string, status: string, days: number, answers: (number | null)[] = [204]) {
  const id = newMessageId();
  await db().webhookMessage.create({
    data: {
      id,
      endpointId,
      eventId: `test:${id}`,
      eventType: "payment.succeeded",
      payload: { type: "payment.succeeded" },
      status,
      attempts: answers.length,
      nextAttemptAt: daysAgo(days),
      createdAt: daysAgo(days + 1),
      deliveredAt: status === "succeeded" ? daysAgo(days) : null,
    },
  });
  for (const [i, httpStatus] of answers.entries())
    await db().webhookAttempt.create({
      data: {
        id: randomUUID(),
        messageId: id,
        endpointId,
        attemptNumber: i + 1,
        startedAt: daysAgo(days),
        outcome: httpStatus === 204 ? "succeeded" : "failed",
        httpStatus,
        latencyMs: 5,
      },
    });
  return id;
}

const left = async (ids: string[]) =>
  (await db().webhookMessage.findMany({ where: { id: { in: ids } }, select: { id: true } }))
    .map((m) => m.id)
    .sort();
const attemptsOf = (ids: string[]) => db().webhookAttempt.count({ where: { messageId: { in: ids } } });

describe("the retention of webhook messages", () => {
  it("prunes settled messages and their attempts past the retention, in batches, and keeps the rest", async () => {
    const { id: endpointId } = await endpointOfNewAccount();
    const oldDelivered = await Promise.all([1, 2, 3].map(() => message(endpointId, "succeeded", 31)));
    const oldFailed = await message(endpointId, "failed", 40, [500, null, 500]);
    const recent = await message(endpointId, "succeeded", 29);
    // Pending for ages (an endpoint disabled, say): still owed, never pruned.
    const oldPending = await message(endpointId, "pending", 60, [500]);
    const all = [...oldDelivered, oldFailed, recent, oldPending];

    // Batches of two: every batch but the last full, so the prune goes on until none is left.
    const pruned = await pruneWebhookMessages(db(), { olderThanSeconds: RETENTION, batchSize: 2 });
    expect(pruned).toBeGreaterThanOrEqual(4);
    expect(await left(all)).toEqual([recent, oldPending].sort());
    expect(await attemptsOf([...oldDelivered, oldFailed])).toBe(0);
    expect(await attemptsOf([recent, oldPending])).toBe(2);
  });

  it("steps over a message a delivery or replay holds, without waiting for it", async () => {
    const { id: endpointId } = await endpointOfNewAccount();
    const held = await message(endpointId, "succeeded", 31);
    const free = await message(endpointId, "succeeded", 31);
    let release = () => {};
    const releaseAsked = new Promise<void>((r) => {
      release = r;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = db().$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM webhook_messages WHERE id = ${held} FOR UPDATE`;
        locked();
        await releaseAsked;
      },
      { timeout: 20_000 },
    );
    await isLocked;
    const started = Date.now();
    await pruneWebhookMessages(db(), { olderThanSeconds: RETENTION });
    expect(Date.now() - started).toBeLessThan(5_000);
    release();
    await holder;
    expect(await left([held, free])).toEqual([held]);
  });
});

describe("the retention of the outbox", () => {
  it("prunes rows sent and marks made past the retention, and keeps a row sent recently however old", async () => {
    const id = (what: string) => `prune-${what}-${randomUUID()}:payment.succeeded`;
    const [oldSent, sentLate, recentSent] = [id("old"), id("late"), id("recent")];
    const row = (rowId: string, created: number, sent: number) => ({
      id: rowId,
      topic: "payment.succeeded",
      payload: {},
      createdAt: daysAgo(created),
      sentAt: daysAgo(sent),
    });
    await db().outboxMessage.createMany({
      data: [row(oldSent, 41, 40), row(sentLate, 41, 1), row(recentSent, 2, 1)],
    });
    await db().processedMessage.createMany({
      data: [
        { consumer: "test.prune", messageId: oldSent, processedAt: daysAgo(40) },
        { consumer: "test.prune", messageId: recentSent, processedAt: daysAgo(1) },
      ],
    });
    const pruned = await pruneSentMessages(db(), { olderThanSeconds: RETENTION });
    expect(pruned.outbox).toBeGreaterThanOrEqual(1);
    const rows = await db().outboxMessage.findMany({
      where: { id: { in: [oldSent, sentLate, recentSent] } },
    });
    expect(rows.map((r) => r.id).sort()).toEqual([sentLate, recentSent].sort());
    const marks = await db().processedMessage.findMany({ where: { consumer: "test.prune" } });
    expect(marks.map((m) => m.messageId)).toEqual([recentSent]);
    await db().outboxMessage.deleteMany({ where: { id: { in: [sentLate, recentSent] } } });
    await db().processedMessage.deleteMany({ where: { consumer: "test.prune" } });
  });
});
