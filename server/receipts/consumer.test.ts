import { afterAll, describe, expect } from "vitest";
import { db } from "../db";
import type { MessageTransport } from "../outbox";
import { createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";
import { takeMessagingTurn } from "../test/messaging/exclusive";
import { envelopeOf, settledPayment } from "../test/messaging/payments";
import { startMessagingProcess } from "../test/messaging/processes";
import {
  deliveriesOf,
  drainOutbox,
  drainReceiptsQueue,
  queuedMessages,
  startTestTransport,
  waitFor,
} from "../test/messaging/queue";
import { it, type TestProvider } from "../test/vitest";
import { consumeReceipts } from "./consumer";
import { issueReceipt } from "./issue";

let release: () => Promise<void>;
let provider: TestProvider;
let account: TestAccount;
let transport: MessageTransport;

it.beforeAll(async ({ provider: running }) => {
  release = await takeMessagingTurn();
  provider = running;
  account = await createTestAccount("receipts");
  transport = await startTestTransport();
  // Start from an empty queue: the deliveries below are then the only ones.
  await drainOutbox(transport);
  await drainReceiptsQueue(transport);
}, 180_000);
afterAll(async () => {
  await transport?.stop();
  await release?.();
});

const receiptsFor = (messageId: string) => db().receipt.findMany({ where: { messageId } });

describe("the receipts consumer", () => {
  it("killed after writing the receipt and before acknowledging: the message is redelivered, one receipt", async () => {
    const { messageId: ours } = await settledPayment(account, provider.client);
    await drainOutbox(transport);
    const crashedAt = new Date();
    const doomed = await startMessagingProcess(["consumer"], {
      CHECKOUT_FAILPOINTS: "consumer_after_receipt",
      CONSUMER_BATCH_SIZE: "1",
    });
    expect(await doomed.exited).toBe("SIGKILL");
    // The one job it took (ours, with whatever other tests' messages the relay batched with it):
    // its receipts are committed, the job still unacknowledged.
    const taken = await db().$queryRaw<{ job_id: string; message_id: string }[]>`
      SELECT job_id, message_id FROM ${queuedMessages} q
       WHERE state = 'active' AND started_on >= ${crashedAt}`;
    expect(new Set(taken.map((t) => t.job_id)).size).toBe(1);
    const victim = taken[0]?.message_id as string;
    expect(await receiptsFor(victim)).toHaveLength(1);

    const survivor = await startMessagingProcess(["consumer"]);
    try {
      await waitFor("the redelivery acknowledged", async () =>
        (await deliveriesOf(victim)).some((d) => d.state === "completed" && d.retry_count >= 1),
      );
      await waitFor("our receipt", async () => (await receiptsFor(ours)).length > 0);
    } finally {
      await survivor.stop();
    }
    expect(await receiptsFor(victim)).toHaveLength(1);
    expect(await db().processedMessage.count({ where: { messageId: victim } })).toBe(1);
  });

  it("the same message delivered 10 times at once, to 10 consumers: one receipt", async () => {
    const { order, messageId } = await settledPayment(account, provider.client);
    const envelope = await envelopeOf(messageId);
    for (let i = 0; i < 10; i++) await transport.publish(envelope);
    const passes = await Promise.all(
      Array.from({ length: 10 }, () => consumeReceipts({ prisma: db(), transport }, { batchSize: 1 })),
    );
    expect(passes.map((p) => p.delivered)).toEqual(Array(10).fill(1));
    expect(passes.reduce((n, p) => n + p.issued, 0)).toBe(1);
    expect(passes.reduce((n, p) => n + p.duplicates, 0)).toBe(9);
    expect(await db().receipt.count({ where: { orderId: order.id } })).toBe(1);
    expect(await db().processedMessage.count({ where: { messageId } })).toBe(1);
    const deliveries = await deliveriesOf(messageId);
    expect(deliveries.map((d) => d.state)).toEqual(Array(10).fill("completed"));
  });

  it("the same message handled 10 times concurrently: one issue, nine duplicates, one receipt number used", async () => {
    const { order, messageId } = await settledPayment(account, provider.client);
    const envelope = await envelopeOf(messageId);
    const [{ before }] = (await db().$queryRaw<{ before: bigint }[]>`
      SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS before FROM receipt_number_seq`) as [
      { before: bigint },
    ];
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => issueReceipt(db(), envelope)));
    expect(outcomes.filter((o) => o.issued)).toHaveLength(1);
    const receipts = await db().receipt.findMany({ where: { orderId: order.id } });
    expect(receipts).toHaveLength(1);
    expect(receipts[0]?.number).toMatch(new RegExp(`^R-\\d{4}-0*${before + 1n}$`));
  });

  it("issues a batch's receipts in one statement; a message delivered twice in it is issued once", async () => {
    const paid = [];
    for (let i = 0; i < 3; i++) paid.push(await settledPayment(account, provider.client));
    const ids = paid.map((p) => p.messageId);
    await drainReceiptsQueue(transport);
    for (const id of [...ids, ids[1] as string]) await transport.publish(await envelopeOf(id));
    const pass = await consumeReceipts({ prisma: db(), transport }, { batchSize: 10 });
    expect(pass).toMatchObject({ delivered: 4, issued: 3, duplicates: 1, rejected: 0 });
    const written = await db().$queryRaw<{ message_id: string; xmin: string }[]>`
      SELECT message_id, xmin::text FROM receipts WHERE message_id = ANY(${ids})`;
    expect(written.map((r) => r.message_id).sort()).toEqual([...ids].sort());
    // One transaction wrote all three: the batch's one statement.
    expect(new Set(written.map((r) => r.xmin)).size).toBe(1);
    for (const id of ids) expect((await deliveriesOf(id)).every((d) => d.state === "completed")).toBe(true);
  });

  it("a batch the database refuses is issued one by one: only the refused message is given back", async () => {
    const [first, second] = [
      await settledPayment(account, provider.client),
      await settledPayment(account, provider.client),
    ];
    const envelope = await envelopeOf(first.messageId);
    await issueReceipt(db(), envelope);
    // Valid on its face, but a second receipt for an order that has one: the receipts' unique
    // order refuses it, and with it the batch. (Deliveries come in no set order, so the order's
    // own receipt is issued before, not raced in the batch.)
    const impostor = { ...envelope, messageId: `${envelope.messageId}:impostor` };
    await drainReceiptsQueue(transport);
    await transport.publish(envelope);
    await transport.publish(impostor);
    await transport.publish(await envelopeOf(second.messageId));
    const pass = await consumeReceipts({ prisma: db(), transport }, { batchSize: 10 });
    expect(pass).toMatchObject({ delivered: 3, issued: 1, duplicates: 1, rejected: 1 });
    expect(
      await db().receipt.count({ where: { messageId: { in: [first.messageId, second.messageId] } } }),
    ).toBe(2);
    expect(await db().processedMessage.count({ where: { messageId: impostor.messageId } })).toBe(0);
    expect((await deliveriesOf(impostor.messageId)).map((d) => d.state)).toEqual(["retry"]);
    await db()
      .$executeRaw`DELETE FROM pgboss.job WHERE name = 'receipts' AND data->>'messageId' = ${impostor.messageId}`;
  });

  it("orders.get shows the receipt once it is issued: its number, the order's lines and total", async () => {
    const { order, payment, messageId } = await settledPayment(account, provider.client);
    const caller = createCaller(contextFor(account));
    expect((await caller.orders.get({ orderId: order.id })).receipt).toBeNull();

    await issueReceipt(db(), await envelopeOf(messageId));
    const view = await caller.orders.get({ orderId: order.id });
    expect(view.receipt).toEqual({
      number: expect.stringMatching(/^R-\d{4}-\d{6,}$/),
      issuedAt: expect.any(String),
      lines: view.items,
      total: order.total,
      currency: order.currency,
    });
    expect(view.receipt?.number.slice(2, 6)).toBe(
      String(new Date(view.receipt?.issuedAt ?? 0).getUTCFullYear()),
    );
    expect(view.receipt?.total).toBe(payment.amountMinor);
  });

  it("a declined payment's event reaches no consumer and gets no receipt", async () => {
    const { order, payment, messageId } = await settledPayment(account, provider.client, "pm_card_declined");
    expect(payment.status).toBe("declined");
    await drainOutbox(transport);
    expect((await db().outboxMessage.findUniqueOrThrow({ where: { id: messageId } })).sentAt).not.toBeNull();
    await drainReceiptsQueue(transport);
    expect(await deliveriesOf(messageId)).toEqual([]);
    expect(await db().receipt.count({ where: { orderId: order.id } })).toBe(0);
  });

  it("gives back a message whose lines do not add up to the payment: no receipt, not marked processed", async () => {
    const { order, messageId } = await settledPayment(account, provider.client);
    const envelope = await envelopeOf(messageId);
    const payload = envelope.payload as { amount: number };
    await transport.publish({ ...envelope, payload: { ...payload, amount: payload.amount + 1 } });
    const pass = await consumeReceipts({ prisma: db(), transport }, { batchSize: 1 });
    expect([pass.delivered, pass.rejected]).toEqual([1, 1]);
    expect(await db().receipt.count({ where: { orderId: order.id } })).toBe(0);
    expect(await db().processedMessage.count({ where: { messageId } })).toBe(0);
    const deliveries = await deliveriesOf(messageId);
    expect(deliveries.map((d) => d.state)).toEqual(["retry"]);
    // The poison copy would come back for hours; the real event is still in the outbox.
    await db()
      .$executeRaw`DELETE FROM pgboss.job WHERE name = 'receipts' AND data->>'messageId' = ${messageId}`;
  });
});
