import { afterAll, describe, expect } from "vitest";
import { db } from "../db";
import type { MessageTransport, TEnvelope } from "../outbox";
import { refundMessageId } from "../outbox/events";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { drainOutbox, drainReceiptsQueue, startTestTransport } from "../test/messaging/queue";
import { newKey } from "../test/payments";
import { paidPayment, refund } from "../test/refunds";
import { it, type TestProvider } from "../test/vitest";
import { issueRefundReceipt, refundReceiptRequest } from "./refund-receipts";

let release: () => Promise<void>;
let provider: TestProvider;
let account: TestAccount;
let transport: MessageTransport;

it.beforeAll(async ({ provider: running }) => {
  release = await takeMessagingTurn();
  provider = running;
  account = await createTestAccount("refund-receipts");
  transport = await startTestTransport();
  await drainOutbox(transport);
  await drainReceiptsQueue(transport);
}, 180_000);
afterAll(async () => {
  await transport?.stop();
  await release?.();
});

describe("refund receipts", () => {
  it("refund.succeeded goes through the outbox and the queue to one refund receipt, shown on the order", async () => {
    const paid = await paidPayment(account, provider.client);
    const done = await refund(
      newKey(),
      { paymentId: paid.paymentId, amountMinor: 900, reason: "wrong size" },
      provider.client,
    );
    if (!done.ok) throw done.error;
    const caller = createCaller(contextFor(account));
    expect((await caller.orders.get({ id: paid.orderId })).refunds).toEqual([
      expect.objectContaining({ id: done.data.id, amountMinor: 900, receiptNumber: null }),
    ]);

    await drainOutbox(transport);
    await drainReceiptsQueue(transport);
    const receipts = await db().refundReceipt.findMany({ where: { refundId: done.data.id } });
    expect(receipts).toEqual([
      expect.objectContaining({
        orderId: paid.orderId,
        paymentId: paid.paymentId,
        amountMinor: 900,
        currency: "EUR",
        reason: "wrong size",
      }),
    ]);
    const number = receipts[0]?.number;
    expect(number).toMatch(/^RF-\d{4}-\d{6,}$/);
    expect((await caller.orders.get({ id: paid.orderId })).refunds).toEqual([
      expect.objectContaining({ id: done.data.id, receiptNumber: number }),
    ]);

    // Delivered again (a lost acknowledgement): nothing more is issued.
    const message = await db().outboxMessage.findUniqueOrThrow({
      where: { id: refundMessageId(done.data.id) },
    });
    const envelope: TEnvelope = {
      messageId: message.id,
      topic: "refund.succeeded",
      createdAt: message.createdAt.toISOString(),
      payload: message.payload,
    };
    expect(await issueRefundReceipt(db(), refundReceiptRequest(envelope))).toEqual({ issued: false });
    expect(await db().refundReceipt.count({ where: { refundId: done.data.id } })).toBe(1);
  });
});
