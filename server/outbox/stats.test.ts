import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { db } from "../db";
import { issueReceipt } from "../receipts";
import { createTestAccount } from "../test/fixtures";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { envelopeOf, settledPayment } from "../test/messaging/payments";
import { drainOutbox, startTestTransport } from "../test/messaging/queue";
import { startTestProvider } from "../test/payments";
import { paymentMessageId } from "./events";
import { outboxStats } from "./stats";

let release: () => Promise<void>;
const planted: string[] = [];
beforeAll(async () => {
  release = await takeMessagingTurn();
}, 180_000);
afterAll(async () => {
  await db().outboxMessage.deleteMany({ where: { id: { in: planted } } });
  await release?.();
});

it("counts pending and sent messages, the oldest pending one's age, and the consumer's processed messages", async () => {
  const provider = await startTestProvider();
  const transport = await startTestTransport();
  try {
    await drainOutbox(transport);
    const { messageId } = await settledPayment(await createTestAccount("stats"), provider.client);
    await drainOutbox(transport);
    const before = await outboxStats(db());

    const stale = paymentMessageId("payment.declined", randomUUID());
    const failing = paymentMessageId("payment.declined", randomUUID());
    planted.push(stale, failing);
    await db().outboxMessage.createMany({
      data: [
        { id: stale, topic: "payment.declined", payload: {}, createdAt: new Date(Date.now() - 3600_000) },
        {
          id: failing,
          topic: "payment.declined",
          payload: {},
          lastError: "queue unavailable",
          nextAttemptAt: new Date(Date.now() + 3600_000),
        },
      ],
    });
    await issueReceipt(db(), await envelopeOf(messageId));
    const during = await outboxStats(db());
    expect(during.pending).toBeGreaterThanOrEqual(before.pending + 2);
    expect(during.failing).toBe(before.failing + 1);
    expect(during.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(3600);
    expect(during.processed).toBe(before.processed + 1);

    await db().outboxMessage.updateMany({ where: { id: { in: planted } }, data: { sentAt: new Date() } });
    const after = await outboxStats(db());
    expect(after.sent).toBe(during.sent + 2);
    expect(after.failing).toBe(before.failing);
  } finally {
    await transport.stop();
    await provider.stop();
  }
});
